import { InvalidArgumentError } from "./errors.js";
import { resolveIri } from "./resolve-iri.js";
import { tokenizeSparql, type SparqlToken } from "./sparql-tokenizer.js";

/** The four SPARQL read query forms. */
export type SparqlReadForm = "SELECT" | "ASK" | "CONSTRUCT" | "DESCRIBE";

/** What the scope check needs to know of a query: its form and every graph it names, as absolute IRIs. */
export interface SparqlQueryInspection {
  form: SparqlReadForm;
  /** Graphs of `FROM <g>`, in order. */
  from: string[];
  /** Graphs of `FROM NAMED <g>`, in order. */
  fromNamed: string[];
  /** Graphs of `GRAPH <g> { ... }` (a variable there is not listed: the dataset bounds it). */
  graphNames: string[];
}

const READ_FORMS: ReadonlySet<string> = new Set(["SELECT", "ASK", "CONSTRUCT", "DESCRIBE"]);

/** Keywords that only SPARQL Update uses. */
const UPDATE_KEYWORDS: ReadonlySet<string> = new Set([
  "INSERT",
  "DELETE",
  "LOAD",
  "CLEAR",
  "CREATE",
  "DROP",
  "COPY",
  "MOVE",
  "ADD",
  "WITH",
]);

const FIELD = "query";

/**
 * The deepest nesting of `{`, `(` and `[` accepted, and the longest run of unary `!`. The engine's parser
 * recurses on each: about 1,000 nested groups overflow its stack (the query engine dies and restarts), and
 * nested collections `((( ... )))` take seconds to parse from about a hundred deep.
 */
export const MAX_SPARQL_NESTING = 40;

/**
 * The longest SPARQL query accepted, in characters: the hard cap that keeps inspection (linear) and the
 * engine's parse bounded whatever the adapter.
 */
export const MAX_SPARQL_LENGTH = 64 * 1024;

function checkNesting(tokens: readonly SparqlToken[]): void {
  let depth = 0;
  let bangs = 0;
  for (const t of tokens) {
    if (t.kind !== "punct") {
      bangs = 0;
      continue;
    }
    if (t.text === "{" || t.text === "(" || t.text === "[") {
      depth += 1;
      if (depth > MAX_SPARQL_NESTING) throw invalid(`nests groups, brackets or parentheses more than ${MAX_SPARQL_NESTING} deep`);
    } else if (t.text === "}" || t.text === ")" || t.text === "]") depth = Math.max(0, depth - 1);
    bangs = t.text === "!" ? bangs + 1 : 0;
    if (bangs > MAX_SPARQL_NESTING) throw invalid(`has more than ${MAX_SPARQL_NESTING} '!' in a row`);
  }
}

function invalid(why: string): InvalidArgumentError {
  return InvalidArgumentError.field(FIELD, why);
}

/**
 * Reads a SPARQL query's prologue (BASE, PREFIX), form and every graph it names (FROM, FROM NAMED,
 * GRAPH <iri>), resolving prefixed names and relative IRIs the way the engine will, so the scope check
 * compares real graph IRIs. Refuses with INVALID_ARGUMENT: updates, SERVICE (a federated query could
 * reach outside the scope), forms other than SELECT/ASK/CONSTRUCT/DESCRIBE, and graph names it cannot
 * resolve (an unknown prefix, a relative IRI without BASE), nesting deeper than MAX_SPARQL_NESTING, and
 * queries longer than MAX_SPARQL_LENGTH. Linear in the query's length (the tokenizer is).
 * Keywords inside strings, IRIs and comments are not keywords (the tokenizer keeps those whole).
 *
 * This is the first line only: the dataset the engine is handed is what bounds a query, so a mistake here
 * can refuse a good query but never widen what a query reads.
 * @example inspectSparqlQuery("PREFIX g: <uko://01J.../> SELECT * FROM g: { ?s ?p ?o }").from // ["uko://01J.../"]
 */
export function inspectSparqlQuery(query: string): SparqlQueryInspection {
  if (query.length > MAX_SPARQL_LENGTH) throw invalid(`must be at most ${MAX_SPARQL_LENGTH} characters, got ${query.length}`);
  const tokens = tokenizeSparql(query);
  checkNesting(tokens);
  const prefixes = new Map<string, string>();
  let base: string | undefined;
  let i = 0;
  const word = (t: SparqlToken | undefined): string | undefined => (t && t.kind === "word" ? t.value.toUpperCase() : undefined);

  const resolveName = (t: SparqlToken | undefined, after: string): string => {
    if (t?.kind === "iri") {
      const iri = resolveIri(t.value, base);
      if (iri === undefined) throw invalid(`the relative IRI ${t.text} after ${after} cannot be resolved: the query has no BASE`);
      return iri;
    }
    if (t?.kind === "pname") {
      const ns = prefixes.get(t.value);
      if (ns === undefined) throw invalid(`the prefix "${t.value}:" of ${t.text} after ${after} is not declared`);
      return ns + (t.local ?? "");
    }
    throw invalid(`${after} must be followed by an IRI${t ? `, got "${t.text}"` : ""}`);
  };

  for (;;) {
    const w = word(tokens[i]);
    if (w === "BASE") {
      base = resolveName(tokens[i + 1]?.kind === "iri" ? tokens[i + 1] : undefined, "BASE");
      i += 2;
    } else if (w === "PREFIX") {
      const p = tokens[i + 1];
      if (p?.kind !== "pname" || p.local !== "") throw invalid(`PREFIX must be followed by a prefix name such as "ex:"`);
      prefixes.set(p.value, resolveName(tokens[i + 2]?.kind === "iri" ? tokens[i + 2] : undefined, `PREFIX ${p.text}`));
      i += 3;
    } else break;
  }

  const head = word(tokens[i]);
  if (head !== undefined && UPDATE_KEYWORDS.has(head)) {
    throw invalid(`${head} is an update: only read queries (SELECT, ASK, CONSTRUCT, DESCRIBE) are allowed`);
  }
  if (head === undefined || !READ_FORMS.has(head)) {
    throw invalid(`must be a SELECT, ASK, CONSTRUCT or DESCRIBE query${tokens[i] ? `, got "${tokens[i].text}"` : ""}`);
  }
  const out: SparqlQueryInspection = { form: head as SparqlReadForm, from: [], fromNamed: [], graphNames: [] };

  for (i += 1; i < tokens.length; i++) {
    const w = word(tokens[i]);
    if (w === undefined) continue;
    if (UPDATE_KEYWORDS.has(w)) throw invalid(`${w} is an update operation: only read queries are allowed`);
    if (w === "SERVICE") throw invalid("SERVICE is not allowed: a federated query could read outside the scope");
    if (w === "BASE" || w === "PREFIX") throw invalid(`${w} must come before the query form`);
    if (w === "FROM") {
      if (word(tokens[i + 1]) === "NAMED") {
        out.fromNamed.push(resolveName(tokens[i + 2], "FROM NAMED"));
        i += 2;
      } else {
        out.from.push(resolveName(tokens[i + 1], "FROM"));
        i += 1;
      }
    } else if (w === "GRAPH") {
      const t = tokens[i + 1];
      if (t?.kind !== "var") out.graphNames.push(resolveName(t, "GRAPH"));
      i += 1;
    }
  }
  return out;
}
