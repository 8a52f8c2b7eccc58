import { UnavailableError } from "../../domain/errors.js";

/** One term of a SPARQL JSON results binding, as the endpoint wrote it. */
export interface JsonResultTerm {
  type: "uri" | "bnode" | "literal" | "typed-literal" | "triple";
  value: string;
  datatype?: string;
  "xml:lang"?: string;
}

/** What a SPARQL JSON results document holds, read up to the row cap. */
export type JsonResults =
  | { kind: "boolean"; value: boolean }
  | { kind: "bindings"; variables: string[]; rows: Record<string, JsonResultTerm>[]; exhaustive: boolean };

/** The largest document read whole (an ASK answer, or a head without bindings). */
const MAX_UNSTREAMED = 1024 * 1024;

function unexpected(why: string): UnavailableError {
  return new UnavailableError(`the SPARQL endpoint sent an unreadable answer: ${why}`);
}

function varsOf(text: string): string[] | undefined {
  const m = /"vars"\s*:\s*(\[[^\]]*\])/.exec(text);
  if (!m) return undefined;
  const vars = JSON.parse(m[1]) as unknown;
  return Array.isArray(vars) ? vars.map(String) : undefined;
}

/**
 * Reads a SPARQL 1.1 JSON results document (`application/sparql-results+json`) as it streams in: each
 * binding object is parsed as soon as it is complete and the text before it dropped, so memory holds one
 * row's text plus the rows kept. At `cap` rows, one more row tells the answer is not exhaustive and
 * `stop()` is called at once, so the rest of a huge answer is never read. ASK answers (no bindings) are
 * read whole, up to a megabyte.
 */
export async function readSparqlJsonResults(body: AsyncIterable<string>, cap: number, stop: () => void): Promise<JsonResults> {
  let buf = "";
  let head: string | undefined;
  let pos = 0;
  const rows: Record<string, JsonResultTerm>[] = [];
  /** Scan state of the binding object being read: where it starts, how deep, inside a string. */
  let objStart = -1;
  let depth = 0;
  let inString = false;
  let scan = 0;
  let closed = false;
  let tail = "";

  const parseRows = (): boolean => {
    for (;;) {
      if (objStart < 0) {
        while (pos < buf.length && (buf.charCodeAt(pos) <= 32 || buf[pos] === ",")) pos++;
        if (pos >= buf.length) return false;
        if (buf[pos] === "]") {
          closed = true;
          tail = buf.slice(pos + 1);
          return true;
        }
        if (buf[pos] !== "{") throw unexpected(`expected a binding object, got "${buf.slice(pos, pos + 20)}"`);
        if (rows.length >= cap) return true;
        objStart = pos;
        scan = pos;
        depth = 0;
        inString = false;
      }
      for (; scan < buf.length; scan++) {
        const c = buf.charCodeAt(scan);
        if (inString) {
          if (c === 92) scan++;
          else if (c === 34) inString = false;
        } else if (c === 34) inString = true;
        else if (c === 123 || c === 91) depth++;
        else if (c === 125 || c === 93) {
          depth--;
          if (depth === 0) break;
        }
      }
      if (scan >= buf.length) return false;
      rows.push(JSON.parse(buf.slice(objStart, scan + 1)) as Record<string, JsonResultTerm>);
      pos = scan + 1;
      objStart = -1;
      if (pos > 1 << 16) {
        buf = buf.slice(pos);
        pos = 0;
      }
    }
  };

  for await (const chunk of body) {
    if (closed) {
      if (tail.length < MAX_UNSTREAMED) tail += chunk;
      continue;
    }
    buf += chunk;
    if (head === undefined) {
      const at = buf.search(/"bindings"\s*:\s*\[/);
      if (at < 0) {
        if (buf.length > MAX_UNSTREAMED) throw unexpected("no bindings in the first megabyte");
        continue;
      }
      head = buf.slice(0, at);
      pos = buf.indexOf("[", at) + 1;
    }
    if (parseRows() && !closed) {
      stop();
      return { kind: "bindings", variables: varsOf(head) ?? [], rows, exhaustive: false };
    }
  }

  if (head === undefined) {
    let doc: { boolean?: unknown; head?: { vars?: unknown } };
    try {
      doc = JSON.parse(buf) as typeof doc;
    } catch (err) {
      throw unexpected((err as Error).message);
    }
    if (typeof doc.boolean === "boolean") return { kind: "boolean", value: doc.boolean };
    const vars = Array.isArray(doc.head?.vars) ? (doc.head.vars as unknown[]).map(String) : [];
    return { kind: "bindings", variables: vars, rows: [], exhaustive: true };
  }
  if (!closed) throw unexpected("the bindings array is truncated");
  return { kind: "bindings", variables: varsOf(head) ?? varsOf(tail) ?? [], rows, exhaustive: true };
}

/** The one column Virtuoso names an ASK result by (upper case in 7.2's JSON when it does not turn it into `boolean`). */
const ASK_COLUMN = "__ask_retval";

/**
 * The answer of an ASK query from a JSON results document, in either form endpoints write: the standard
 * `boolean` member, or (Virtuoso 7.2) a one-column binding `__ASK_RETVAL` holding 1 for true, and 0 or no
 * row at all for false. Undefined when the document is neither, which the caller refuses as unreadable.
 */
export function askAnswer(read: JsonResults): boolean | undefined {
  if (read.kind === "boolean") return read.value;
  if (read.variables.length !== 1 || read.variables[0].toLowerCase() !== ASK_COLUMN) return undefined;
  if (read.rows.length === 0) return false;
  if (read.rows.length > 1) return undefined;
  const terms = Object.values(read.rows[0]);
  if (terms.length !== 1) return undefined;
  const value = terms[0].value;
  if (value === "1" || value === "true") return true;
  if (value === "0" || value === "false") return false;
  return undefined;
}

/** One N-Triples term as read: the kind, the value, and a literal's datatype or language. */
export interface NTriplesTerm {
  kind: "iri" | "blank" | "literal";
  value: string;
  datatype?: string;
  language?: string;
}

const ECHAR: Record<string, string> = { t: "\t", b: "\b", n: "\n", r: "\r", f: "\f", '"': '"', "'": "'", "\\": "\\" };

function unescapeNt(s: string): string {
  if (!s.includes("\\")) return s;
  return s.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))/g, (all, u4: string, u8: string, e: string) =>
    u4 || u8 ? String.fromCodePoint(parseInt(u4 || u8, 16)) : (ECHAR[e] ?? all),
  );
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && (s[i] === " " || s[i] === "\t")) i++;
  return i;
}

function ntTerm(s: string, i: number): [NTriplesTerm, number] {
  const c = s[i];
  if (c === "<") {
    if (s[i + 1] === "<") throw unexpected("a result holds an RDF triple term, which a Term cannot carry");
    const j = s.indexOf(">", i);
    if (j < 0) throw unexpected("an unterminated IRI");
    return [{ kind: "iri", value: unescapeNt(s.slice(i + 1, j)) }, j + 1];
  }
  if (c === "_" && s[i + 1] === ":") {
    let j = i + 2;
    while (j < s.length && s.charCodeAt(j) > 32) j++;
    return [{ kind: "blank", value: s.slice(i + 2, j) }, j];
  }
  if (c === '"') {
    let j = i + 1;
    while (j < s.length && s[j] !== '"') j += s[j] === "\\" ? 2 : 1;
    if (j >= s.length) throw unexpected("an unterminated literal");
    const value = unescapeNt(s.slice(i + 1, j));
    j++;
    if (s[j] === "@") {
      let k = j + 1;
      while (k < s.length && s.charCodeAt(k) > 32) k++;
      return [{ kind: "literal", value, language: s.slice(j + 1, k) }, k];
    }
    if (s[j] === "^" && s[j + 1] === "^" && s[j + 2] === "<") {
      const k = s.indexOf(">", j + 3);
      return [{ kind: "literal", value, datatype: unescapeNt(s.slice(j + 3, k)) }, k + 1];
    }
    return [{ kind: "literal", value }, j];
  }
  throw unexpected(`an N-Triples term was expected at "${s.slice(i, i + 20)}"`);
}

/** An N-Triples triple as read. */
export type NTriplesTriple = [NTriplesTerm, NTriplesTerm, NTriplesTerm];

/**
 * Reads N-Triples (`application/n-triples`) as it streams in, line by line, up to `cap` triples: one more
 * makes the answer non-exhaustive and calls `stop()` at once. Comment and blank lines are skipped.
 */
export async function readNTriples(
  body: AsyncIterable<string>,
  cap: number,
  stop: () => void,
): Promise<{ triples: NTriplesTriple[]; exhaustive: boolean }> {
  const triples: NTriplesTriple[] = [];
  let rest = "";
  const line = (text: string): boolean => {
    const i = skipSpace(text, 0);
    if (i >= text.length || text[i] === "#" || text[i] === "\r") return false;
    if (triples.length >= cap) return true;
    const s = ntTerm(text, i);
    const p = ntTerm(text, skipSpace(text, s[1]));
    const o = ntTerm(text, skipSpace(text, p[1]));
    triples.push([s[0], p[0], o[0]]);
    return false;
  };
  for await (const chunk of body) {
    rest += chunk;
    let nl = rest.indexOf("\n");
    let from = 0;
    while (nl >= 0) {
      if (line(rest.slice(from, nl))) {
        stop();
        return { triples, exhaustive: false };
      }
      from = nl + 1;
      nl = rest.indexOf("\n", from);
    }
    rest = rest.slice(from);
  }
  if (line(rest)) return { triples, exhaustive: false };
  return { triples, exhaustive: true };
}
