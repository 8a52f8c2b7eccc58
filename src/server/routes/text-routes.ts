import { create } from "@bufbuild/protobuf";
import type { TextSearchRequest } from "../../application/search/text-search.js";
import type { ConnectRouter } from "@connectrpc/connect";
import { TextBackendService, TextResultSchema } from "../../../gen/acms/v1/text_pb.js";
import type { RouteDeps } from "../composition/server-deps.js";
import { scopedSearchHandlers } from "./scoped-search-handlers.js";

/**
 * TextBackendService: scoped keyword search on the configured text backend. The access interceptor has
 * resolved the `acms-scope` header into the call's view; SearchStream sends exactly Search's results,
 * one per message in rank order, and stops (and stops the backend's work) when the call is cancelled.
 */
export function textRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const handlers = scopedSearchHandlers(
    (view, req: TextSearchRequest, signal) => deps.services.searchText(view, req, signal),
    (r) => create(TextResultSchema, r),
  );
  return (router) => {
    router.service(TextBackendService, { search: handlers.unary, searchStream: handlers.stream });
  };
}
