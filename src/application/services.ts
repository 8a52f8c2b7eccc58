import type { ScopedBackendView } from "../domain/scoped-backend-view.js";
import type { GraphQueries } from "./graph/graph-queries.js";
import type { ResourceRegistry } from "./registry/resource-registry.js";
import type { ResourceEraser } from "./registry/resource-eraser.js";
import type { ScopeResolver } from "./scopes/scope-resolver.js";
import type { Indexer } from "./indexing/indexer.js";
import type { FetchAnswer } from "./rag/fetch-content.js";
import type { HybridSearchFields } from "./rag/hybrid-request.js";
import type { HybridAnswer } from "./rag/hybrid-search.js";
import type { TextAnswer, TextSearchRequest } from "./search/text-search.js";
import type { TierService } from "./tiers/tier-service.js";
import type { VectorAnswer, VectorSearchRequest } from "./search/vector-search.js";

/**
 * The use cases one server offers, each bound to the adapters the composition root picked: what the
 * route modules call (they translate the wire and nothing else). Built once per server by
 * `createServices` (src/server/composition/composition-root.ts); a test builds its own over any adapters.
 */
export interface Services {
  /** Projects, resources, links and aliases as the calling principal may see them. */
  registry: ResourceRegistry;
  /** Resolving, reading and narrowing scopes. */
  scopes: ScopeResolver;
  /** Scoped SPARQL, triples by subject and traversal (UNIMPLEMENTED without a graph backend). */
  graph: GraphQueries;
  /** Writes: documents, deletions, triples, rebuilds. */
  indexer: Indexer;
  /** Scoped keyword search. */
  searchText(view: ScopedBackendView, req: TextSearchRequest, signal?: AbortSignal): Promise<TextAnswer>;
  /** Scoped similarity search (UNIMPLEMENTED without a vector backend). */
  searchVectors(view: ScopedBackendView, req: VectorSearchRequest, signal?: AbortSignal): Promise<VectorAnswer>;
  /** Keyword, vector and graph evidence fused with RRF. */
  hybridSearch(view: ScopedBackendView, req: HybridSearchFields, signal?: AbortSignal, tenant?: string): Promise<HybridAnswer>;
  /** Units by UKO URI, in request order (UNIMPLEMENTED without a unit reader). */
  fetchContent(view: ScopedBackendView, uris: readonly string[]): Promise<FetchAnswer>;
  /** The context tiers. */
  tiers: TierService;
  /** The current index generation, for answers that are not searches (graph queries, FetchContent). */
  indexGeneration(): Promise<bigint>;
  /** DeleteResource and DeleteProject: crash-safe erasure everywhere a resource lives. */
  eraser: ResourceEraser;
}
