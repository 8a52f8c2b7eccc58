const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

interface IriParts {
  scheme?: string;
  authority?: string;
  path: string;
  query?: string;
  fragment?: string;
}

/** RFC 3986 appendix B, the reference regular expression. */
const PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;

function split(iri: string): IriParts {
  const m = PARTS.exec(iri);
  if (!m) return { path: iri };
  return { scheme: m[1], authority: m[2], path: m[3] ?? "", query: m[4], fragment: m[5] };
}

/** RFC 3986 §5.2.4. */
function removeDotSegments(path: string): string {
  let input = path;
  const out: string[] = [];
  while (input.length > 0) {
    if (input.startsWith("../")) input = input.slice(3);
    else if (input.startsWith("./")) input = input.slice(2);
    else if (input.startsWith("/./")) input = input.slice(2);
    else if (input === "/.") input = "/";
    else if (input.startsWith("/../")) {
      input = input.slice(3);
      out.pop();
    } else if (input === "/..") {
      input = "/";
      out.pop();
    } else if (input === "." || input === "..") input = "";
    else {
      const next = input.indexOf("/", input.startsWith("/") ? 1 : 0);
      const seg = next < 0 ? input : input.slice(0, next);
      out.push(seg);
      input = next < 0 ? "" : input.slice(next);
    }
  }
  return out.join("");
}

function merge(base: IriParts, refPath: string): string {
  if (base.authority !== undefined && base.path === "") return `/${refPath}`;
  const slash = base.path.lastIndexOf("/");
  return slash < 0 ? refPath : base.path.slice(0, slash + 1) + refPath;
}

function recompose(p: IriParts): string {
  let s = "";
  if (p.scheme !== undefined) s += `${p.scheme}:`;
  if (p.authority !== undefined) s += `//${p.authority}`;
  s += p.path;
  if (p.query !== undefined) s += `?${p.query}`;
  if (p.fragment !== undefined) s += `#${p.fragment}`;
  return s;
}

/** Whether `iri` is absolute (has a scheme). */
export function isAbsoluteIri(iri: string): boolean {
  return SCHEME.test(iri);
}

/**
 * Resolves an IRI reference against a base IRI (RFC 3986 §5.2, as SPARQL's BASE does), so the scope check
 * compares the same absolute IRI the query engine will use. Without a base, an absolute reference is
 * returned as written (an engine does not normalise it either) and a relative one gives undefined: it
 * cannot be resolved, and callers refuse it.
 */
export function resolveIri(ref: string, base?: string): string | undefined {
  if (base === undefined) return isAbsoluteIri(ref) ? ref : undefined;
  const r = split(ref);
  const b = split(base);
  const t: IriParts = { path: "" };
  if (r.scheme !== undefined) {
    t.scheme = r.scheme;
    t.authority = r.authority;
    t.path = removeDotSegments(r.path);
    t.query = r.query;
  } else {
    if (r.authority !== undefined) {
      t.authority = r.authority;
      t.path = removeDotSegments(r.path);
      t.query = r.query;
    } else {
      if (r.path === "") {
        t.path = b.path;
        t.query = r.query !== undefined ? r.query : b.query;
      } else {
        t.path = r.path.startsWith("/") ? removeDotSegments(r.path) : removeDotSegments(merge(b, r.path));
        t.query = r.query;
      }
      t.authority = b.authority;
    }
    t.scheme = b.scheme;
  }
  t.fragment = r.fragment;
  return recompose(t);
}
