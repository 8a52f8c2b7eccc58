import { tokenizeSparql } from "../../domain/sparql-tokenizer.js";
import { SKOLEM_PREFIX } from "./endpoint-terms.js";

/**
 * What a zero-argument BNODE() becomes: a fresh skolem IRI per call, which the adapter reads back as a
 * blank node (Virtuoso leaves IRI("nodeID://...") unbound, so its own blank node form cannot be made).
 */
const FRESH_NODE = `IRI(CONCAT("${SKOLEM_PREFIX}q", STRUUID()))`;

/**
 * Rewrites the one SPARQL 1.1 built-in Virtuoso 7 lacks and that has a faithful stand-in: `BNODE()`
 * (without argument; Virtuoso answers "Built-in function is not implemented"). It becomes a fresh
 * skolem IRI per call, which the adapter answers as a blank node, as it answers stored blank nodes.
 * Tokens are read with the inspection's tokenizer, so nothing inside a string, IRI or comment changes,
 * and no graph name is touched (the scope check ran on the query as written).
 */
export function rewriteForVirtuoso(query: string): string {
  if (!/bnode/i.test(query)) return query;
  const tokens = tokenizeSparql(query);
  let out = "";
  let from = 0;
  for (let i = 0; i + 2 < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== "word" || t.value.toUpperCase() !== "BNODE") continue;
    if (tokens[i + 1].text !== "(" || tokens[i + 2].text !== ")") continue;
    out += query.slice(from, t.offset) + FRESH_NODE;
    from = tokens[i + 2].offset + 1;
    i += 2;
  }
  return out + query.slice(from);
}
