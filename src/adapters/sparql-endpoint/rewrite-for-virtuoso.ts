import { tokenizeSparql, type SparqlToken } from "../../domain/sparql-tokenizer.js";
import { SKOLEM_PREFIX } from "./endpoint-terms.js";

/**
 * What a zero-argument BNODE() becomes: a fresh skolem IRI per call, which the adapter reads back as a
 * blank node (Virtuoso leaves IRI("nodeID://...") unbound, so its own blank node form cannot be made).
 */
const FRESH_NODE = `IRI(CONCAT("${SKOLEM_PREFIX}q", STRUUID()))`;

/** A term test on a stored blank node, which Virtuoso holds as a skolem IRI (`endpoint-terms.ts`). */
const isSkolem = (arg: string) => `(isIRI(${arg}) && STRSTARTS(STR(${arg}), "${SKOLEM_PREFIX}"))`;

/**
 * Calls answered as on a store that keeps blank nodes: a skolem IRI is blank and not an IRI, and its
 * STR() is an error, as STR() of a blank node is in SPARQL (17.4.2.5), not its skolem IRI. The error is
 * an unbound variable (`unbound`, a name the query does not use), which Virtuoso treats as SPARQL treats
 * an error: a FILTER on it fails, a projection of it is unbound, COALESCE and BOUND see no value.
 */
const CALLS: Partial<Record<string, (arg: string, unbound: string) => string>> = {
  ISBLANK: (arg) => `(isBlank(${arg}) || ${isSkolem(arg)})`,
  ISIRI: (arg) => `(isIRI(${arg}) && !STRSTARTS(STR(${arg}), "${SKOLEM_PREFIX}"))`,
  ISURI: (arg) => `(isIRI(${arg}) && !STRSTARTS(STR(${arg}), "${SKOLEM_PREFIX}"))`,
  STR: (arg, unbound) => `IF(${isSkolem(arg)}, ${unbound}, STR(${arg}))`,
};

/** A variable name `query` does not hold (so it is never bound): `?acms_error`, with digits if needed. */
function unusedVariable(query: string): string {
  let name = "?acms_error";
  for (let i = 0; query.includes(name.slice(1)); i++) name = `?acms_error${i}`;
  return name;
}

/**
 * The kind rank SPARQL 1.1 (15.1) fixes for ORDER BY: unbound (or an error) 0, blank node 1, IRI 2,
 * literal 3. Virtuoso sorts literals before IRIs and skolem IRIs among the IRIs, so each ORDER BY
 * condition gets this rank as a key in front of it (Virtuoso's isLiteral is true of an unbound value;
 * the length of STR() tells unbound apart, and every bound term has one).
 */
const kindRank = (e: string) => `IF(COALESCE(STRLEN(STR(${e})), -1) < 0, 0, IF(isBlank(${e}) || ${isSkolem(e)}, 1, IF(isIRI(${e}), 2, 3)))`;

/** The index of the last token of the ORDER BY condition starting at `at`, or -1 when none starts there. */
function conditionEnd(tokens: readonly SparqlToken[], at: number): number {
  const t = tokens[at];
  if (!t) return -1;
  if (t.kind === "var") return at;
  if (t.kind === "punct" && t.text === "(") return closing(tokens, at);
  const call = (t.kind === "word" || t.kind === "pname" || t.kind === "iri") && tokens[at + 1]?.text === "(";
  return call ? closing(tokens, at + 1) : -1;
}

/** The index of the `)` closing the `(` at `open`, or -1 when the query leaves it open. */
function closing(tokens: readonly SparqlToken[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (tokens[i].kind !== "punct") continue;
    if (tokens[i].text === "(") depth++;
    else if (tokens[i].text === ")" && --depth === 0) return i;
  }
  return -1;
}

/**
 * Rewrites what Virtuoso 7 answers differently from a SPARQL 1.1 store keeping blank nodes, where a
 * faithful stand-in exists:
 * - `BNODE()` (without argument; Virtuoso answers "Built-in function is not implemented") becomes a
 *   fresh skolem IRI per call, which the adapter answers as a blank node, as it answers stored ones;
 * - `isBlank(x)` is also true, and `isIRI(x)` / `isURI(x)` false, for a skolem IRI, so stored blank
 *   nodes test as blank nodes inside a query too, and `STR(x)` of one is an error (see `CALLS`; the
 *   argument is repeated, each copy rewritten);
 * - each ORDER BY condition gets the kind rank SPARQL fixes (`kindRank`) as a key in front of it.
 * Tokens are read with the inspection's tokenizer, so nothing inside a string, IRI or comment changes,
 * and no graph name is touched (the scope check ran on the query as written).
 */
export function rewriteForVirtuoso(query: string, unbound = unusedVariable(query)): string {
  if (!/bnode|isblank|isiri|isuri|order|str/i.test(query)) return query;
  const tokens = tokenizeSparql(query);
  const text = (a: number, b: number) => query.slice(tokens[a].offset, tokens[b].offset + tokens[b].text.length);
  let out = "";
  let from = 0;
  for (let i = 0; i + 2 < tokens.length; i++) {
    const t = tokens[i];
    if (
      t.kind === "word" &&
      t.value.toUpperCase() === "ORDER" &&
      tokens[i + 1].kind === "word" &&
      tokens[i + 1].value.toUpperCase() === "BY"
    ) {
      const conditions: string[] = [];
      let at = i + 2;
      for (let end = conditionEnd(tokens, at); end >= 0; end = conditionEnd(tokens, at)) {
        const head = tokens[at].value.toUpperCase();
        const directed = tokens[at].kind === "word" && (head === "ASC" || head === "DESC");
        const expression = rewriteForVirtuoso(directed ? text(at + 1, end) : text(at, end), unbound);
        conditions.push(`${directed ? head : "ASC"}(${kindRank(expression)}) ${directed ? head : ""}${expression}`);
        at = end + 1;
      }
      if (conditions.length === 0) continue;
      out += `${query.slice(from, t.offset)}ORDER BY ${conditions.join(" ")}`;
      from = tokens[at - 1].offset + tokens[at - 1].text.length;
      i = at - 1;
      continue;
    }
    if (t.kind !== "word" || tokens[i + 1].text !== "(") continue;
    const name = t.value.toUpperCase();
    if (name === "BNODE" && tokens[i + 2].text === ")") {
      out += query.slice(from, t.offset) + FRESH_NODE;
      from = tokens[i + 2].offset + 1;
      i += 2;
      continue;
    }
    const call = CALLS[name];
    const end = call ? closing(tokens, i + 1) : -1;
    if (!call || end < 0) continue;
    const arg = rewriteForVirtuoso(query.slice(tokens[i + 1].offset + 1, tokens[end].offset), unbound);
    out += query.slice(from, t.offset) + call(arg, unbound);
    from = tokens[end].offset + 1;
    i = end;
  }
  return out + query.slice(from);
}
