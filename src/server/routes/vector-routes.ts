import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { VectorBackendService, VectorResultSchema, type VectorResult } from "../../../gen/acms/v1/vector_pb.js";
import { viewOf } from "../handler-context.js";
import { setStreamAnswerHeaders } from "../stream-answer-headers.js";
import type { ServerDeps } from "../server.js";
import { searchVectors, type VectorResultRecord, type VectorSearchDeps } from "../vector-search.js";

function toVectorResult(r: VectorResultRecord): VectorResult {
  return create(VectorResultSchema, {
    ukoUri: r.ukoUri,
    content: r.content,
    score: r.score,
    metadata: r.metadata,
    resourceId: r.resourceId,
    path: r.path,
  });
}

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
  return (router) => {
    router.service(VectorBackendService, {
      async similaritySearch(req, ctx) {
        const view = viewOf(ctx);
        const answer = await searchVectors(searchDeps, view, req, ctx.signal);
        return {
          results: answer.results.map(toVectorResult),
          scopeId: view.scopeId,
          exhaustive: answer.exhaustive,
          indexGeneration: answer.generation,
        };
      },
      async *similaritySearchStream(req, ctx) {
        const view = viewOf(ctx);
        const answer = await searchVectors(searchDeps, view, req, ctx.signal);
        setStreamAnswerHeaders(ctx.responseHeader, view.scopeId, answer.exhaustive, answer.generation);
        for (const r of answer.results) {
          ctx.signal.throwIfAborted();
          yield { result: toVectorResult(r) };
        }
      },
    });
  };
}
