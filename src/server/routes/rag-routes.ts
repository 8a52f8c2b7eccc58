import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ContributionSchema,
  FetchedItemSchema,
  HybridResultSchema,
  RagService,
  Source,
  type HybridResult,
} from "../../../gen/acms/v1/rag_pb.js";
import { principalKey } from "../access/context-keys.js";
import { viewOf } from "../access/handler-context.js";
import { SOURCE_OF, type RagSource } from "../../application/rag/hybrid-request.js";
import type { HybridResultRecord } from "../../application/rag/hybrid-search.js";
import type { RouteDeps } from "../composition/server-deps.js";
import { setStreamAnswerHeaders } from "./stream-answer-headers.js";

function toHybridResult(r: HybridResultRecord): HybridResult {
  return create(HybridResultSchema, {
    ukoUri: r.ukoUri,
    resourceId: r.resourceId,
    path: r.path,
    content: r.content,
    score: r.score,
    metadata: r.metadata,
    contributions: r.contributions.map((c) => create(ContributionSchema, { source: SOURCE_OF[c.source], rank: c.rank, score: c.score })),
  });
}

/**
 * Says, in `acms-partial` and `acms-failed-sources` metadata, whether sources failed: the stream's
 * messages carry results only, so a streaming client reads partiality (and the unary one may) here.
 */
function setPartialMetadata(headers: Headers, failed: readonly RagSource[]): void {
  headers.set("acms-partial", String(failed.length > 0));
  if (failed.length > 0) headers.set("acms-failed-sources", failed.map((s) => Source[SOURCE_OF[s]]).join(","));
}

/**
 * RagService: hybrid search (keyword, vector and graph evidence fused with RRF) and FetchContent. The
 * access interceptor has resolved the call's view and refused out-of-scope or malformed UKO URIs before
 * a handler runs. HybridSearchStream sends exactly HybridSearch's fused results, one per message in
 * order, and a cancelled call stops the sources' work (their signal) and the sending.
 */
export function ragRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  return (router) => {
    router.service(RagService, {
      async hybridSearch(req, ctx) {
        const view = viewOf(ctx);
        const answer = await deps.services.hybridSearch(view, req, ctx.signal, ctx.values.get(principalKey)?.name);
        setPartialMetadata(ctx.responseTrailer, answer.failedSources);
        return {
          results: answer.results.map(toHybridResult),
          scopeId: view.scopeId,
          exhaustive: answer.exhaustive,
          indexGeneration: answer.generation,
          failedSources: answer.failedSources.map((s) => SOURCE_OF[s]),
          partial: answer.partial,
        };
      },
      async *hybridSearchStream(req, ctx) {
        const view = viewOf(ctx);
        const answer = await deps.services.hybridSearch(view, req, ctx.signal, ctx.values.get(principalKey)?.name);
        setStreamAnswerHeaders(ctx.responseHeader, view.scopeId, answer.exhaustive, answer.generation);
        setPartialMetadata(ctx.responseHeader, answer.failedSources);
        for (const r of answer.results) {
          ctx.signal.throwIfAborted();
          yield { result: toHybridResult(r) };
        }
      },
      async fetchContent(req, ctx) {
        const view = viewOf(ctx);
        const indexGeneration = await deps.services.indexGeneration();
        const answer = await deps.services.fetchContent(view, req.ukoUris);
        return {
          items: answer.items.map((i) => create(FetchedItemSchema, i)),
          missing: answer.missing,
          scopeId: view.scopeId,
          // Every position is answered: found in `items` or listed in `missing`.
          exhaustive: true,
          indexGeneration,
        };
      },
    });
  };
}
