import { UnimplementedError } from "../../domain/errors.js";
import { guardResults } from "../../domain/leak-guard.js";
import { resolveDepth } from "../../domain/request-limits.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { GraphBackend, GraphQueryOptions, GraphQueryResult, GraphTriple } from "../../ports/graph-backend.js";

/** Traverse's depth when the request has none. */
export const DEFAULT_TRAVERSE_DEPTH = 2;

/** How one graph call runs: cancelled with the call, its work counted to the calling tenant. */
export interface GraphCallOptions {
  signal?: AbortSignal;
  /** The principal's name: the graph pool shares its workers per tenant. */
  tenant?: string;
}

/** A SPARQL answer with what every graph answer carries. */
export interface GraphQueryAnswer {
  result: GraphQueryResult;
  /** The document store's generation, read before the query ran (PutTriples bumps it too). */
  indexGeneration: bigint;
  elapsedMs: number;
}

/** Triples of GetTriples or Traverse, each inside the view. */
export interface GraphTriplesAnswer {
  triples: GraphTriple[];
  exhaustive: boolean;
  indexGeneration: bigint;
  elapsedMs: number;
}

/** What the graph use cases run over. */
export interface GraphQueriesDeps {
  /** Absent: every call answers UNIMPLEMENTED. */
  graph?: GraphBackend;
  /** Bounds every query. */
  sparqlTimeoutMs: number;
  indexGeneration(): Promise<bigint>;
}

/**
 * The graph use cases: scoped SPARQL, triples by subject and N-hop traversal on the configured graph backend.
 * The backend reads only the view's named graphs; GetTriples and Traverse results pass the leak guard on the
 * way out. The scope's path filters do not apply: triples belong to a resource, not to a document path.
 * @example const { result } = await graph.query(view, "SELECT * WHERE { ?s ?p ?o } LIMIT 5", { signal });
 */
export class GraphQueries {
  constructor(private readonly deps: GraphQueriesDeps) {}

  async query(view: ScopedBackendView, query: string, opts: GraphCallOptions = {}): Promise<GraphQueryAnswer> {
    const graph = this.backend();
    const indexGeneration = await this.deps.indexGeneration();
    const started = performance.now();
    const result = await graph.query(view, query, this.options(opts));
    return { result, indexGeneration, elapsedMs: performance.now() - started };
  }

  async getTriples(view: ScopedBackendView, subject: string, opts: GraphCallOptions = {}): Promise<GraphTriplesAnswer> {
    const graph = this.backend();
    const indexGeneration = await this.deps.indexGeneration();
    const started = performance.now();
    const r = await graph.getTriples(view, subject, this.options(opts));
    return {
      triples: guardResults(view, r.triples, "graph backend"),
      exhaustive: r.exhaustive,
      indexGeneration,
      elapsedMs: performance.now() - started,
    };
  }

  /** Triples reachable from `start` within `depth` hops (absent: DEFAULT_TRAVERSE_DEPTH), and the depth used. */
  async traverse(
    view: ScopedBackendView,
    start: string,
    depth: number | undefined,
    opts: GraphCallOptions = {},
  ): Promise<GraphTriplesAnswer & { depth: number }> {
    const graph = this.backend();
    const hops = resolveDepth("depth", depth, DEFAULT_TRAVERSE_DEPTH);
    const indexGeneration = await this.deps.indexGeneration();
    const started = performance.now();
    const r = await graph.traverse(view, start, hops, this.options(opts));
    return {
      triples: guardResults(view, r.triples, "graph backend"),
      exhaustive: r.exhaustive,
      indexGeneration,
      elapsedMs: performance.now() - started,
      depth: hops,
    };
  }

  private backend(): GraphBackend {
    if (!this.deps.graph) throw new UnimplementedError("no graph backend is configured on this server");
    return this.deps.graph;
  }

  private options(opts: GraphCallOptions): GraphQueryOptions {
    return { timeoutMs: this.deps.sparqlTimeoutMs, signal: opts.signal, tenant: opts.tenant };
  }
}
