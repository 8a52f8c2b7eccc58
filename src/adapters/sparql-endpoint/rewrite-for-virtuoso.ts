import { tokenizeSparql, type SparqlToken } from "../../domain/sparql-tokenizer.js";
import { SKOLEM_PREFIX } from "./endpoint-terms.js";

/**
 * What a zero-argument BNODE() becomes: a fresh skolem IRI per call, which the adapter reads back as a
 * blank node (Virtuoso leaves IRI("nodeID://...") unbound, so its own blank node form cannot be made).
 */
const FRESH_NODE = `IRI(CONCAT("${SKOLEM_PREFIX}q", STRUUID()))`;

/** A term test on a stored blank node, which Virtuoso holds as a skolem IRI (`endpoint-terms.ts`). */
const isSkolem = (arg: string) => `(isIRI(${arg}) && STRSTARTS(STR(${arg}), "${SKOLEM_PREFIX}"))`;

/** Term tests answered as on a store that keeps blank nodes: a skolem IRI is blank and not an IRI. */
const TERM_TESTS: Partial<Record<string, (arg: string) => string>> = {
  ISBLANK: (arg) => `(isBlank(${arg}) || ${isSkolem(arg)})`,
  ISIRI: (arg) => `(isIRI(${arg}) && !STRSTARTS(STR(${arg}), "${SKOLEM_PREFIX}"))`,
  ISURI: (arg) => `(isIRI(${arg}) && !STRSTARTS(STR(${arg}), "${SKOLEM_PREFIX}"))`,
};

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
 *   nodes test as blank nodes inside a query too (the argument is repeated, each copy rewritten).
 * Tokens are read with the inspection's tokenizer, so nothing inside a string, IRI or comment changes,
 * and no graph name is touched (the scope check ran on the query as written).
 */
export function rewriteForVirtuoso(query: string): string {
  if (!/bnode|isblank|isiri|isuri/i.test(query)) return query;
  const tokens = tokenizeSparql(query);
  let out = "";
  let from = 0;
  for (let i = 0; i + 2 < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== "word" || tokens[i + 1].text !== "(") continue;
    const name = t.value.toUpperCase();
    if (name === "BNODE" && tokens[i + 2].text === ")") {
      out += query.slice(from, t.offset) + FRESH_NODE;
      from = tokens[i + 2].offset + 1;
      i += 2;
      continue;
    }
    const test = TERM_TESTS[name];
    const end = test ? closing(tokens, i + 1) : -1;
    if (!test || end < 0) continue;
    const arg = rewriteForVirtuoso(query.slice(tokens[i + 1].offset + 1, tokens[end].offset));
    out += query.slice(from, t.offset) + test(arg);
    from = tokens[end].offset + 1;
    i = end;
  }
  return out + query.slice(from);
}
