import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { TextBackendService, TextResultSchema, type TextResult } from "../../../gen/acms/v1/text_pb.js";
import { viewOf } from "../handler-context.js";
import { setStreamAnswerHeaders } from "../stream-answer-headers.js";
import type { ServerDeps } from "../server.js";
import { searchText, type TextResultRecord, type TextSearchDeps } from "../text-search.js";

function toTextResult(r: TextResultRecord): TextResult {
  return create(TextResultSchema, {
    ukoUri: r.ukoUri,
    content: r.content,
    score: r.score,
    metadata: r.metadata,
    resourceId: r.resourceId,
    path: r.path,
  });
}

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
  return (router) => {
    router.service(TextBackendService, {
      async search(req, ctx) {
        const view = viewOf(ctx);
        const answer = await searchText(searchDeps, view, req, ctx.signal);
        return {
          results: answer.results.map(toTextResult),
          scopeId: view.scopeId,
          exhaustive: answer.exhaustive,
          indexGeneration: answer.generation,
        };
      },
      async *searchStream(req, ctx) {
        const view = viewOf(ctx);
        const answer = await searchText(searchDeps, view, req, ctx.signal);
        setStreamAnswerHeaders(ctx.responseHeader, view.scopeId, answer.exhaustive, answer.generation);
        for (const r of answer.results) {
          ctx.signal.throwIfAborted();
          yield { result: toTextResult(r) };
        }
      },
    });
  };
}
