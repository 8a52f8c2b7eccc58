import { InvalidArgumentError } from "./errors.js";

/** The kinds of SPARQL token the scope check needs to tell apart. */
export type SparqlTokenKind = "iri" | "pname" | "word" | "var" | "string" | "bnode" | "langtag" | "number" | "punct";

/** One SPARQL token. */
export interface SparqlToken {
  kind: SparqlTokenKind;
  /** The source text of the token. */
  text: string;
  /** `iri`: the IRI with `\u` escapes decoded; `pname`: the prefix (without `:`); otherwise the text. */
  value: string;
  /** `pname` only: the local part with `\` escapes removed. */
  local?: string;
  /** Offset of the token in the query. */
  offset: number;
}

const IRIREF = /<(?:[^<>"{}|^`\\\u0000-\u0020]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>/y;
const PN_CHARS_BASE =
  "A-Za-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}";
const PN_CHARS_U = `${PN_CHARS_BASE}_`;
const PN_CHARS = `${PN_CHARS_U}\\-0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040`;
const PLX = "%[0-9A-Fa-f]{2}|\\\\[_~.\\-!$&'()*+,;=/?#@%]";
const PN_PREFIX = `[${PN_CHARS_BASE}](?:[${PN_CHARS}.]*[${PN_CHARS}])?`;
const PN_LOCAL = `(?:[${PN_CHARS_U}:0-9]|${PLX})(?:(?:[${PN_CHARS}.:]|${PLX})*(?:[${PN_CHARS}:]|${PLX}))?`;
const PNAME = new RegExp(`(${PN_PREFIX})?:(${PN_LOCAL})?`, "uy");
/** A prefix name's first letter and the maximal run of characters it may hold before its `:`. */
const PN_RUN = new RegExp(`[${PN_CHARS_BASE}][${PN_CHARS}.]*`, "uy");
const VAR = new RegExp(`[?$][${PN_CHARS_U}0-9][${PN_CHARS_U}0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040]*`, "uy");
const BNODE = new RegExp(`_:[${PN_CHARS_U}0-9](?:[${PN_CHARS}.]*[${PN_CHARS}])?`, "uy");
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const LANGTAG = /@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*/y;
const NUMBER = /(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;
const TWO_CHAR_PUNCT = new Set(["&&", "||", "!=", "<=", ">=", "^^"]);

function matchAt(re: RegExp, text: string, at: number): string | undefined {
  re.lastIndex = at;
  const m = re.exec(text);
  return m && m[0].length > 0 ? m[0] : undefined;
}

function decodeUchars(s: string): string {
  return s.replace(/\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})/g, (_m, a: string | undefined, b: string | undefined) =>
    String.fromCodePoint(parseInt(a ?? b ?? "0", 16)),
  );
}

/** The end offset (exclusive) of the string literal starting at `at`, or throws when it never ends. */
function stringEnd(query: string, at: number): number {
  const quote = query[at];
  const long = query.startsWith(quote.repeat(3), at);
  let i = at + (long ? 3 : 1);
  while (i < query.length) {
    const c = query[i];
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (long) {
      if (query.startsWith(quote.repeat(3), i)) {
        // A long string may end in up to two more quotes of its own: `"""a""""` ends after the last one.
        let end = i + 3;
        while (query[end] === quote && end < i + 5) end += 1;
        return end;
      }
    } else {
      if (c === quote) return i + 1;
      if (c === "\n" || c === "\r") break;
    }
    i += 1;
  }
  throw InvalidArgumentError.field("query", `unterminated string starting at offset ${at}`);
}

/**
 * Splits a SPARQL query into tokens, skipping whitespace and comments, and keeping strings and IRIs whole,
 * so that keywords inside strings, IRIs or comments are never mistaken for the query's own. It follows the
 * SPARQL 1.1 lexical grammar for the tokens the scope check reads (IRIs, prefixed names, keywords,
 * variables); everything else becomes a `punct`, `number` or `langtag` token. A `<` opens an IRI whenever the
 * IRIREF production matches there (as a SPARQL parser reads it), else it is an operator.
 * Throws INVALID_ARGUMENT (field `query`) on an unterminated string.
 *
 * Linear in the query's length: a failed prefixed-name match at a letter scans the whole run of name
 * characters ahead of it, and every later start inside that run fails the same way (the run ends at the
 * same character, which is not a `:` after a non-`.`), so the run is scanned once and those starts skip
 * the match (a start at a non-letter fails at its first character). Without
 * that, a run of letters that are not keyword letters (any non-ASCII one) was scanned again from each of
 * its characters: quadratic, seconds for a 16 KB query, on the serving thread.
 */
export function tokenizeSparql(query: string): SparqlToken[] {
  const tokens: SparqlToken[] = [];
  let i = 0;
  const n = query.length;
  /** Starts before this offset cannot open a prefixed name (see above). */
  let noPnameBefore = 0;
  while (i < n) {
    const c = query[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i += 1;
      continue;
    }
    if (c === "#") {
      while (i < n && query[i] !== "\n" && query[i] !== "\r") i += 1;
      continue;
    }
    if (c === '"' || c === "'") {
      const end = stringEnd(query, i);
      const text = query.slice(i, end);
      tokens.push({ kind: "string", text, value: text, offset: i });
      i = end;
      continue;
    }
    if (c === "<") {
      const iri = matchAt(IRIREF, query, i);
      if (iri) {
        tokens.push({ kind: "iri", text: iri, value: decodeUchars(iri.slice(1, -1)), offset: i });
        i += iri.length;
        continue;
      }
    }
    if (c === "?" || c === "$") {
      const v = matchAt(VAR, query, i);
      if (v) {
        tokens.push({ kind: "var", text: v, value: v.slice(1), offset: i });
        i += v.length;
        continue;
      }
    }
    if (c === "_" && query[i + 1] === ":") {
      const b = matchAt(BNODE, query, i);
      if (b) {
        tokens.push({ kind: "bnode", text: b, value: b, offset: i });
        i += b.length;
        continue;
      }
    }
    if (c === "@") {
      const l = matchAt(LANGTAG, query, i);
      if (l) {
        tokens.push({ kind: "langtag", text: l, value: l, offset: i });
        i += l.length;
        continue;
      }
    }
    if (i >= noPnameBefore) {
      PNAME.lastIndex = i;
      const pm = PNAME.exec(query);
      if (pm && pm[0].length > 0 && pm[0].includes(":")) {
        const local = (pm[2] ?? "").replace(/\\(.)/g, "$1");
        tokens.push({ kind: "pname", text: pm[0], value: pm[1] ?? "", local, offset: i });
        i += pm[0].length;
        continue;
      }
      PN_RUN.lastIndex = i;
      if (PN_RUN.exec(query)) noPnameBefore = PN_RUN.lastIndex;
    }
    const w = matchAt(WORD, query, i);
    if (w) {
      tokens.push({ kind: "word", text: w, value: w, offset: i });
      i += w.length;
      continue;
    }
    const num = matchAt(NUMBER, query, i);
    if (num) {
      tokens.push({ kind: "number", text: num, value: num, offset: i });
      i += num.length;
      continue;
    }
    const two = query.slice(i, i + 2);
    const p = TWO_CHAR_PUNCT.has(two) ? two : String.fromCodePoint(query.codePointAt(i) ?? 0);
    tokens.push({ kind: "punct", text: p, value: p, offset: i });
    i += p.length;
  }
  return tokens;
}
