import type { RdfTerm, RdfTriple } from "../domain/rdf-term.js";
import type { ScopedBackendView } from "../domain/scoped-backend-view.js";

/** One SELECT solution: variable name (without `?`) to bound term; unbound variables are absent. */
export type SparqlRow = Record<string, RdfTerm>;

/**
 * The answer of one scoped SPARQL query, by form: SELECT gives variables (projection order) and rows,
 * ASK a boolean, CONSTRUCT and DESCRIBE triples. `exhaustive` is false when a result cap cut it short.
 */
export type GraphQueryResult =
  | { form: "SELECT"; variables: string[]; rows: SparqlRow[]; exhaustive: boolean }
  | { form: "ASK"; boolean: boolean; exhaustive: true }
  | { form: "CONSTRUCT" | "DESCRIBE"; triples: RdfTriple[]; exhaustive: boolean };

/** Options of one SPARQL query. */
export interface GraphQueryOptions {
  /** The query is stopped after running this many ms (DEADLINE_EXCEEDED); time waiting for the engine is bounded apart. */
  timeoutMs: number;
  /** Who asks (the principal): an engine shared by tenants queues each apart and serves them in turn. */
  tenant?: string;
  /** Aborts the query (a cancelled call or stream). */
  signal?: AbortSignal;
}

/** A triple with the resource whose named graph holds it, so the edge can check it against the view. */
export interface GraphTriple extends RdfTriple {
  resourceId: string;
}

/**
 * Triples found by GetTriples or Traverse, each once (a triple held by several in-scope graphs names one
 * of them); `exhaustive` is false when the result cap cut them short.
 */
export interface GraphTriplesResult {
  triples: GraphTriple[];
  exhaustive: boolean;
}

/**
 * The graph port: one named graph per resource (`uko://<resource-ulid>/`), every read restricted to the
 * named graphs of the view's resources. Adapters: Oxigraph (embedded default), a SPARQL 1.1 Protocol
 * endpoint (external). All share `runGraphBackendSuite` (test/graph/graph-backend-suite.ts).
 */
export interface GraphBackend {
  /**
   * Stores triples in the resource's named graph, durably before it resolves. `replace` drops the graph's
   * previous triples first (in the same transaction). Returns the number of triples written (duplicates of
   * the same triple count once, since a graph is a set).
   */
  putTriples(resourceId: string, triples: readonly RdfTriple[], replace: boolean): Promise<number>;
  /** Drops the resource's named graph. */
  clearResource(resourceId: string): Promise<void>;
  /**
   * Runs a SPARQL read query over the view's graphs only: the default graph is the union of the in-scope
   * named graphs and the named graphs are the in-scope ones. Updates and SERVICE are INVALID_ARGUMENT;
   * FROM / FROM NAMED / GRAPH <iri> naming a graph outside the scope is a ScopeViolation; a query running
   * past `timeoutMs` is DEADLINE_EXCEEDED.
   */
  query(view: ScopedBackendView, sparql: string, opts: GraphQueryOptions): Promise<GraphQueryResult>;
  /** Every in-scope triple whose subject is `subject` (an IRI, or `_:label` for a blank node). */
  getTriples(view: ScopedBackendView, subject: string, opts: GraphQueryOptions): Promise<GraphTriplesResult>;
  /**
   * Every in-scope triple within `depth` hops of `start` (breadth first over IRI and blank node objects;
   * depth 0 = the start node's own triples).
   */
  traverse(view: ScopedBackendView, start: string, depth: number, opts: GraphQueryOptions): Promise<GraphTriplesResult>;
  /** A counter bumped by every committed write, for responses' `index_generation` when no document store runs. */
  generation(): bigint;
  /** Stops the query worker and closes the store. */
  close(): Promise<void>;
  /**
   * Erases the resource's named graph for good, with every copy the adapter keeps of it (typed-literal
   * graphs, staging graphs, snapshots), answering how many triples it held. Durable when it resolves.
   */
  eraseResource(resourceId: string): Promise<number>;
  /**
   * Every resource whose graph holds a triple, in no order: what the start-up sweep checks against the
   * registry (ResourceEraser.sweepOrphanGraphs), which erases the graphs of resources it does not know. Only
   * an adapter whose store belongs to this deployment alone has it (Oxigraph, in the data directory): a
   * SPARQL endpoint may hold other deployments' graphs, which a sweep would erase, so it has none.
   */
  resourceIds?(): Promise<string[]>;
}
