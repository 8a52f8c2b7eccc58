import type { HandlerContext } from "@connectrpc/connect";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { viewOf } from "../access/handler-context.js";
import type { HitRecord } from "../../application/search/hydrate-hits.js";
import { setStreamAnswerHeaders } from "./stream-answer-headers.js";

/** A scoped search answer as text and similarity search return it. */
interface ScopedSearchAnswer {
  results: HitRecord[];
  exhaustive: boolean;
  generation: bigint;
}

/** The unary and server-streaming handlers of one scoped search, sharing one search function. */
export interface ScopedSearchHandlers<Req, R, A extends string> {
  /** The answer as its message (type name `A`), written out as `resultMessageOf` writes each result. */
  unary(
    req: Req,
    ctx: HandlerContext,
  ): Promise<{ $typeName: A; results: R[]; scopeId: string; exhaustive: boolean; indexGeneration: bigint }>;
  stream(req: Req, ctx: HandlerContext): AsyncGenerator<{ result: R }>;
}

/**
 * A search result as the message `create` makes of it (the same fields; the metadata object shared, as `create`
 * shares it), written out: `create` walks the descriptor's fields for every result. The routes type what it
 * makes as their result message, so a field the protos add and this does not write fails to compile.
 */
export function resultMessageOf<N extends string>(typeName: N) {
  return (r: HitRecord) => ({
    $typeName: typeName,
    ukoUri: r.ukoUri,
    content: r.content,
    score: r.score,
    metadata: r.metadata,
    resourceId: r.resourceId,
    path: r.path,
  });
}

/**
 * Builds a search's unary and streaming handlers so that both answer exactly alike: the stream sends the
 * unary call's results, one per message in rank order, with `scope_id`, `exhaustive` and
 * `index_generation` in its response headers, and stops (the search's work too, through the call's
 * signal) when the call is cancelled. The access interceptor has put the call's view in its context.
 */
export function scopedSearchHandlers<Req, R, A extends string>(
  search: (view: ScopedBackendView, req: Req, signal: AbortSignal) => Promise<ScopedSearchAnswer>,
  toResult: (r: HitRecord) => R,
  answerTypeName: A,
): ScopedSearchHandlers<Req, R, A> {
  return {
    async unary(req, ctx) {
      const view = viewOf(ctx);
      const answer = await search(view, req, ctx.signal);
      return {
        $typeName: answerTypeName,
        results: answer.results.map(toResult),
        scopeId: view.scopeId,
        exhaustive: answer.exhaustive,
        indexGeneration: answer.generation,
      };
    },
    async *stream(req, ctx) {
      const view = viewOf(ctx);
      const answer = await search(view, req, ctx.signal);
      setStreamAnswerHeaders(ctx.responseHeader, view.scopeId, answer.exhaustive, answer.generation);
      for (const r of answer.results) {
        ctx.signal.throwIfAborted();
        yield { result: toResult(r) };
      }
    },
  };
}
