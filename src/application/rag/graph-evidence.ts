import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { parseUkoUri, type UkoUri } from "../../domain/uko-uri.js";
import type { GraphBackend, GraphQueryResult, SparqlRow } from "../../ports/graph-backend.js";

/** Literal predicates whose values name a node: a query word found in one of them matches the node. */
export const LABEL_PREDICATES: readonly string[] = [
  "http://www.w3.org/2000/01/rdf-schema#label",
  "http://www.w3.org/2004/02/skos/core#prefLabel",
  "http://schema.org/name",
  "https://schema.org/name",
  "http://purl.org/dc/elements/1.1/title",
  "http://purl.org/dc/terms/title",
];

/** The shortest query word matched against labels (shorter ones match nearly every label). */
export const MIN_GRAPH_WORD_LENGTH = 3;
/** The most query words matched against labels. */
export const MAX_GRAPH_WORDS = 16;
/** The most labelled nodes a query matches; more makes the evidence non-exhaustive. */
export const MAX_MATCHED_NODES = 256;
/** The most (node, neighbour) and (node, unit) pairs read per hop. */
export const MAX_EXPANSION_ROWS = 4096;

/** The evidence weight of a unit `hops` steps from a matched node: 1, 1/2, 1/3. */
export function hopWeight(hops: number): number {
  return 1 / (1 + hops);
}

/** One document or chunk the graph points at, with its graph score in [0, 1]. */
export interface GraphUnit {
  ukoUri: string;
  address: UkoUri;
  score: number;
}

/** The graph source's answer: units best first (score, then UKO URI). */
export interface GraphEvidence {
  units: GraphUnit[];
  exhaustive: boolean;
}

/** The words of a query matched (case-insensitively, as substrings) against node labels. */
export function graphQueryWords(query: string): string[] {
  const words = new Set<string>();
  for (const m of query.matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0].toLowerCase();
    if (Array.from(w).length >= MIN_GRAPH_WORD_LENGTH) words.add(w);
    if (words.size === MAX_GRAPH_WORDS) break;
  }
  return [...words];
}

function sparqlString(s: string): string {
  return `"${s
    .replace(/[\\"]/g, (c) => `\\${c}`)
    .replace(/\n/g, "\\n")
    .replace(/\r/g, "\\r")}"`;
}

/** IRIs that can be written as `<iri>` in SPARQL (others cannot be a node we expand). */
function isWritableIri(iri: string): boolean {
  return iri.length > 0 && !/[\u0000-\u0020<>"{}|^`\\]/u.test(iri);
}

/** A UKO URI of a document or chunk, or undefined (graph IRIs and other IRIs are not units). */
function unitOf(iri: string): UkoUri | undefined {
  if (!iri.startsWith("uko://")) return undefined;
  try {
    return parseUkoUri(iri, "graph");
  } catch {
    return undefined;
  }
}

function iriOf(row: SparqlRow, name: string): string | undefined {
  const t = row[name];
  return t && t.kind === "iri" ? t.value : undefined;
}

function selectRows(result: GraphQueryResult): { rows: SparqlRow[]; exhaustive: boolean } {
  if (result.form !== "SELECT") return { rows: [], exhaustive: true };
  return { rows: result.rows, exhaustive: result.exhaustive };
}

/** What a graph expansion needs. */
export interface GraphEvidenceOptions {
  /** The most units returned. */
  depth: number;
  timeoutMs: number;
  /** The caller, whose queue of a shared graph engine the queries wait in (see GraphQueryOptions.tenant). */
  tenant?: string;
  signal?: AbortSignal;
}

/**
 * The graph source of hybrid search. Every query runs through the graph port with the call's view, so
 * it sees the in-scope named graphs only.
 *
 * 1. Match: IRI nodes with a label literal (rdfs:label, skos:prefLabel, schema:name, dc:title,
 *    dcterms:title) containing a query word (lower-cased, at least 3 characters, as a substring).
 * 2. Expand one hop: the IRIs linked to a matched node in either direction.
 * 3. Map to units: a node that is itself a UKO URI of a document or chunk (`uko://<res>/<path>[#i]`) is
 *    that unit; a node linked (either direction) to such a URI points at it. So a unit is reached at 0
 *    (a matched node), 1 (linked to one) or 2 (linked to a neighbour) hops, weighing 1, 1/2 or 1/3.
 * 4. Score: for each query word, the unit's best weight through nodes matching that word; the unit's
 *    score is their mean over the query words, in [0, 1]. Units are ranked by score, then UKO URI.
 *
 * A unit outside the view (a triple of an in-scope graph may name any URI) is dropped here, before it
 * is ever read. `exhaustive` is false when a cap cut a step short.
 */
export async function findGraphEvidence(
  graph: GraphBackend,
  view: ScopedBackendView,
  query: string,
  opts: GraphEvidenceOptions,
): Promise<GraphEvidence> {
  const words = graphQueryWords(query);
  if (words.length === 0 || view.resourceIds.length === 0) return { units: [], exhaustive: true };
  const qopts = { timeoutMs: opts.timeoutMs, signal: opts.signal, tenant: opts.tenant };
  let exhaustive = true;

  const labelFilter = words.map((w) => `CONTAINS(LCASE(STR(?label)), ${sparqlString(w)})`).join(" || ");
  const matched = selectRows(
    await graph.query(
      view,
      `SELECT DISTINCT ?node ?label WHERE {
        VALUES ?p { ${LABEL_PREDICATES.map((p) => `<${p}>`).join(" ")} }
        ?node ?p ?label .
        FILTER(isIRI(?node) && isLiteral(?label) && (${labelFilter}))
      } ORDER BY ?node ?label LIMIT ${MAX_MATCHED_NODES * 4 + 1}`,
      qopts,
    ),
  );
  exhaustive &&= matched.exhaustive && matched.rows.length <= MAX_MATCHED_NODES * 4;
  /** node → the query words its labels contain. */
  const wordsOf = new Map<string, Set<string>>();
  for (const row of matched.rows.slice(0, MAX_MATCHED_NODES * 4)) {
    const node = iriOf(row, "node");
    const label = row.label?.value.toLowerCase();
    if (!node || label === undefined || !isWritableIri(node)) continue;
    let set = wordsOf.get(node);
    if (!set) {
      if (wordsOf.size === MAX_MATCHED_NODES) {
        exhaustive = false;
        continue;
      }
      wordsOf.set(node, (set = new Set()));
    }
    for (const w of words) if (label.includes(w)) set.add(w);
  }

  /** unit URI → its address and best weight per word. */
  const evidence = new Map<string, { address: UkoUri; byWord: Map<string, number> }>();
  const credit = (iri: string, ws: Iterable<string>, hops: number) => {
    const address = unitOf(iri);
    if (!address || !view.allows(address.resourceId, address.path)) return;
    let e = evidence.get(iri);
    if (!e) evidence.set(iri, (e = { address, byWord: new Map() }));
    const weight = hopWeight(hops);
    for (const w of ws) e.byWord.set(w, Math.max(e.byWord.get(w) ?? 0, weight));
  };
  for (const [node, ws] of wordsOf) credit(node, ws, 0);

  /** Non-unit neighbours → the words of the matched nodes they neighbour. */
  const neighbourWords = new Map<string, Set<string>>();
  const linked = async (nodes: readonly string[], unitsOnly: boolean): Promise<SparqlRow[]> => {
    if (nodes.length === 0) return [];
    const filter = unitsOnly ? `isIRI(?other) && STRSTARTS(STR(?other), "uko://")` : "isIRI(?other)";
    const answer = selectRows(
      await graph.query(
        view,
        `SELECT DISTINCT ?node ?other WHERE {
          VALUES ?node { ${nodes.map((n) => `<${n}>`).join(" ")} }
          { ?node ?p ?other } UNION { ?other ?p ?node }
          FILTER(${filter} && ?other != ?node)
        } ORDER BY ?node ?other LIMIT ${MAX_EXPANSION_ROWS + 1}`,
        qopts,
      ),
    );
    exhaustive &&= answer.exhaustive && answer.rows.length <= MAX_EXPANSION_ROWS;
    return answer.rows.slice(0, MAX_EXPANSION_ROWS);
  };

  for (const row of await linked([...wordsOf.keys()], false)) {
    const node = iriOf(row, "node");
    const other = iriOf(row, "other");
    const ws = node ? wordsOf.get(node) : undefined;
    if (!other || !ws) continue;
    if (unitOf(other)) credit(other, ws, 1);
    else if (isWritableIri(other) && !wordsOf.has(other)) {
      let set = neighbourWords.get(other);
      if (!set) {
        if (neighbourWords.size === MAX_MATCHED_NODES) {
          exhaustive = false;
          continue;
        }
        neighbourWords.set(other, (set = new Set()));
      }
      for (const w of ws) set.add(w);
    }
  }
  opts.signal?.throwIfAborted();
  for (const row of await linked([...neighbourWords.keys()], true)) {
    const node = iriOf(row, "node");
    const other = iriOf(row, "other");
    const ws = node ? neighbourWords.get(node) : undefined;
    if (other && ws) credit(other, ws, 2);
  }

  const units: GraphUnit[] = [];
  for (const [ukoUri, e] of evidence) {
    let sum = 0;
    for (const w of words) sum += e.byWord.get(w) ?? 0;
    if (sum > 0) units.push({ ukoUri, address: e.address, score: sum / words.length });
  }
  units.sort((a, b) => b.score - a.score || (a.ukoUri < b.ukoUri ? -1 : a.ukoUri > b.ukoUri ? 1 : 0));
  if (units.length > opts.depth) exhaustive = false;
  return { units: units.slice(0, opts.depth), exhaustive };
}
