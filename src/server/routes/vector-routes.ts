import { create } from "@bufbuild/protobuf";
import type { VectorSearchRequest } from "../../application/search/vector-search.js";
import type { ConnectRouter } from "@connectrpc/connect";
import { VectorBackendService, VectorResultSchema } from "../../../gen/acms/v1/vector_pb.js";
import type { RouteDeps } from "../composition/server-deps.js";
import { scopedSearchHandlers } from "./scoped-search-handlers.js";

/**
 * VectorBackendService: scoped cosine similarity search on the configured vector backend (UNIMPLEMENTED
 * when none is). The access interceptor has resolved the `acms-scope` header into the call's view;
 * SimilaritySearchStream sends exactly SimilaritySearch's results, one per message in rank order, and
 * stops (and stops the backend's work) when the call is cancelled.
 */
export function vectorRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const handlers = scopedSearchHandlers(
    (view, req: VectorSearchRequest, signal) => deps.services.searchVectors(view, req, signal),
    (r) => create(VectorResultSchema, r),
  );
  return (router) => {
    router.service(VectorBackendService, { similaritySearch: handlers.unary, similaritySearchStream: handlers.stream });
  };
}
