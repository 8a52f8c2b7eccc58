import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { TextBackendService, TextResultSchema } from "../../../gen/acms/v1/text_pb.js";
import type { ServerDeps } from "../server.js";
import { searchText, type TextSearchDeps } from "../text-search.js";
import { scopedSearchHandlers } from "./scoped-search-handlers.js";

/**
 * TextBackendService: scoped keyword search on the configured text backend. The access interceptor has
 * resolved the `acms-scope` header into the call's view; SearchStream sends exactly Search's results,
 * one per message in rank order, and stops (and stops the backend's work) when the call is cancelled.
 */
export function textRoutes(deps: ServerDeps): (router: ConnectRouter) => void {
  const searchDeps: TextSearchDeps = {
    text: deps.backends.text,
    documents: deps.backends.documents,
    maxResultsCap: deps.config.maxResultsCap,
    recentWindowMs: deps.config.recentWindowMs,
  };
  const handlers = scopedSearchHandlers(
    (view, req: { query: string; maxResults?: number }, signal) => searchText(searchDeps, view, req, signal),
    (r) => create(TextResultSchema, r),
  );
  return (router) => {
    router.service(TextBackendService, { search: handlers.unary, searchStream: handlers.stream });
  };
}
