import type { VectorSearchRequest } from "../../application/search/vector-search.js";
import type { ConnectRouter } from "@connectrpc/connect";
import { VectorBackendService, type SimilaritySearchResponse, type VectorResult } from "../../../gen/acms/v1/vector_pb.js";
import type { RouteDeps } from "../composition/server-deps.js";
import { resultMessageOf, scopedSearchHandlers } from "./scoped-search-handlers.js";
import type { HitRecord } from "../../application/search/hydrate-hits.js";

/** A result as its message (see resultMessageOf). */
export const vectorResultOf: (r: HitRecord) => VectorResult = resultMessageOf("acms.v1.VectorResult");

/**
 * VectorBackendService: scoped cosine similarity search on the configured vector backend (UNIMPLEMENTED
 * when none is). The access interceptor has resolved the `acms-scope` header into the call's view;
 * SimilaritySearchStream sends exactly SimilaritySearch's results, one per message in rank order, and
 * stops (and stops the backend's work) when the call is cancelled.
 */
export function vectorRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const handlers = scopedSearchHandlers(
    (view, req: VectorSearchRequest, signal) => deps.services.searchVectors(view, req, signal),
    vectorResultOf,
    "acms.v1.SimilaritySearchResponse",
  );
  return (router) => {
    // The answer is its message as written (typed: a field the protos add and the handler does not write fails to compile).
    const similaritySearch: (...args: Parameters<typeof handlers.unary>) => Promise<SimilaritySearchResponse> = handlers.unary;
    router.service(VectorBackendService, { similaritySearch, similaritySearchStream: handlers.stream });
  };
}
