import type { TextSearchRequest } from "../../application/search/text-search.js";
import type { ConnectRouter } from "@connectrpc/connect";
import { TextBackendService, type SearchResponse, type TextResult } from "../../../gen/acms/v1/text_pb.js";
import type { RouteDeps } from "../composition/server-deps.js";
import { resultMessageOf, scopedSearchHandlers } from "./scoped-search-handlers.js";
import type { HitRecord } from "../../application/search/hydrate-hits.js";

/** A result as its message (see resultMessageOf). */
export const textResultOf: (r: HitRecord) => TextResult = resultMessageOf("acms.v1.TextResult");

/**
 * TextBackendService: scoped keyword search on the configured text backend. The access interceptor has
 * resolved the `acms-scope` header into the call's view; SearchStream sends exactly Search's results,
 * one per message in rank order, and stops (and stops the backend's work) when the call is cancelled.
 */
export function textRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const handlers = scopedSearchHandlers(
    (view, req: TextSearchRequest, signal) => deps.services.searchText(view, req, signal),
    textResultOf,
    "acms.v1.SearchResponse",
  );
  return (router) => {
    // The answer is its message as written (typed: a field the protos add and the handler does not write fails to compile).
    const search: (...args: Parameters<typeof handlers.unary>) => Promise<SearchResponse> = handlers.unary;
    router.service(TextBackendService, { search, searchStream: handlers.stream });
  };
}
