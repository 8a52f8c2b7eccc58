import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { VectorBackendService, VectorResultSchema } from "../../../gen/acms/v1/vector_pb.js";
import type { ServerDeps } from "../server.js";
import { searchVectors, type VectorSearchDeps } from "../vector-search.js";
import { scopedSearchHandlers } from "./scoped-search-handlers.js";

/**
 * VectorBackendService: scoped cosine similarity search on the configured vector backend (UNIMPLEMENTED
 * when none is). The access interceptor has resolved the `acms-scope` header into the call's view;
 * SimilaritySearchStream sends exactly SimilaritySearch's results, one per message in rank order, and
 * stops (and stops the backend's work) when the call is cancelled.
 */
export function vectorRoutes(deps: ServerDeps): (router: ConnectRouter) => void {
  const searchDeps: VectorSearchDeps = {
    vector: deps.backends.vector,
    documents: deps.backends.documents,
    embeddingDim: deps.config.embeddingDim,
    maxResultsCap: deps.config.maxResultsCap,
    recentWindowMs: deps.config.recentWindowMs,
  };
  const handlers = scopedSearchHandlers(
    (view, req: { embedding: readonly number[]; topK?: number; minScore?: number }, signal) => searchVectors(searchDeps, view, req, signal),
    (r) => create(VectorResultSchema, r),
  );
  return (router) => {
    router.service(VectorBackendService, { similaritySearch: handlers.unary, similaritySearchStream: handlers.stream });
  };
}
