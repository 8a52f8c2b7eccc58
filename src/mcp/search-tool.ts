import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RagService, Source } from "../../gen/acms/v1/rag_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { runTool, type ToolEnv, type ToolExtra } from "./run-tool.js";
import { errorResult } from "./tool-result.js";
import { hitShape, indexGeneration, scopeIdArg, scopedAnswer, toolOutput } from "./wire-shapes.js";

const SOURCE_NAMES: Record<Source, string> = {
  [Source.UNSPECIFIED]: "unspecified",
  [Source.TEXT]: "text",
  [Source.VECTOR]: "vector",
  [Source.GRAPH]: "graph",
};

type Hit = z.infer<typeof hitShape>;

/** A search result of any of the three RPCs as the tool answers it (the wire's fields, snake_case). */
function toHit(r: {
  ukoUri: string;
  resourceId: string;
  path: string;
  content: string;
  score: number;
  metadata: { [key: string]: string };
}): Hit {
  return { uko_uri: r.ukoUri, resource_id: r.resourceId, path: r.path, content: r.content, score: r.score, metadata: { ...r.metadata } };
}

/**
 * `search`: the scope's content by meaning and words. `text` is Search (BM25), `vector` SimilaritySearch with
 * `text` (the server embeds the query; without an embedder it answers an error), `hybrid` (the default)
 * HybridSearch without an embedding (every source that applies, fused by reciprocal rank).
 */
export function registerSearchTool(server: McpServer, env: ToolEnv): void {
  server.registerTool(
    "search",
    {
      title: "Search the knowledge in scope",
      description:
        "Search the documents this connection's scope may see (code, docs, datasets indexed into ACMS) and get the " +
        "best-matching passages, best first. Use it to find where something is described before reading it in full " +
        "with `fetch`. Each result has a `uko_uri` (its address: pass it to `fetch`), the passage `content`, the " +
        "document `path`, its `resource_id` and a `score` in [0, 1]. Modes: `hybrid` (default: keyword and semantic " +
        "results fused), `text` (keyword/BM25: exact names, identifiers, error messages), `vector` (semantic; needs " +
        "an embedder on the server). Nothing outside the scope is ever searched.",
      inputSchema: {
        query: z.string().describe("what to look for: words, a question, an identifier"),
        mode: z.enum(["text", "vector", "hybrid"]).optional().describe("text, vector or hybrid (default hybrid)"),
        top_k: z.number().int().optional().describe("how many results (default 20; at most the server's cap, 1000 by default)"),
        include_paths: z
          .array(z.string())
          .optional()
          .describe(
            "only documents whose path matches one of these globs (relative POSIX, `**` recursive), e.g. `src/**/*.ts`; " +
              "it narrows the scope for this search, never widens it",
          ),
        group_by_document: z
          .boolean()
          .optional()
          .describe("mode text only: one result per document (its best-matching passage), so `top_k` counts documents (default false)"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput({
        mode: z.enum(["text", "vector", "hybrid"]),
        results: z.array(hitShape),
        ...scopedAnswer,
        index_generation: indexGeneration,
        partial: z.boolean().optional().describe("hybrid: true when a source failed and the fusion went on without it"),
        failed_sources: z.array(z.string()).optional(),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      const include = args.include_paths ?? [];
      if (include.length > 0) {
        // A network transport cannot narrow a call's scope: the server's own endpoint runs the tool instead.
        const forwarded = await forwardedSearch(env, args, extra);
        if (forwarded) return forwarded;
      }
      return runTool(
        env,
        args.scope_id,
        extra,
        async (call) => {
          const mode = args.mode ?? "hybrid";
          if (args.group_by_document && mode !== "text") throw groupingNeedsText(mode);
          // `include_paths` narrows the scope inside the RPC's own access check (its view's path filter), so
          // every engine applies it in its query like a scope's own include_paths: exact, `exhaustive` honest.
          let options = call.options;
          if (include.length > 0) {
            if (!call.context.narrowPaths) {
              throw new ConnectError(
                "include_paths needs the server's MCP endpoint (POST /mcp), which this connection cannot reach",
                Code.Unimplemented,
              );
            }
            options = { ...options, contextValues: call.context.narrowPaths(include) };
          }
          const wanted = args.top_k;
          let hits: Hit[];
          let answer: { scopeId: string; exhaustive: boolean; indexGeneration: bigint };
          const extraOut: Record<string, unknown> = {};
          if (mode === "text") {
            const res = await createClient(TextBackendService, call.transport).search(
              { query: args.query, maxResults: wanted, groupByDocument: args.group_by_document ?? false },
              options,
            );
            hits = res.results.map(toHit);
            answer = res;
          } else if (mode === "vector") {
            const res = await createClient(VectorBackendService, call.transport).similaritySearch(
              { text: args.query, topK: wanted },
              options,
            );
            hits = res.results.map(toHit);
            answer = res;
          } else {
            const res = await createClient(RagService, call.transport).hybridSearch({ query: args.query, topK: wanted }, options);
            hits = res.results.map((r) => ({
              ...toHit(r),
              contributions: r.contributions.map((c) => ({ source: SOURCE_NAMES[c.source], rank: c.rank, score: c.score })),
            }));
            answer = res;
            extraOut.partial = res.partial;
            extraOut.failed_sources = res.failedSources.map((s) => SOURCE_NAMES[s]);
          }
          return {
            mode,
            results: hits,
            scope_id: answer.scopeId,
            exhaustive: answer.exhaustive,
            index_generation: Number(answer.indexGeneration),
            ...extraOut,
          };
        },
        (args.mode ?? "hybrid") === "text" ? { max_results: "top_k" } : undefined,
      );
    },
  );
}

/** `group_by_document` in a mode other than text (Search alone groups chunks by document): INVALID_ARGUMENT naming it. */
function groupingNeedsText(mode: string): ConnectError {
  const description = `applies to mode text only (Search groups chunks by document), not ${mode}`;
  return new ConnectError(`group_by_document: ${description}`, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: { fieldViolations: [{ field: "group_by_document", description }] } },
  ]);
}

/**
 * `search` with `include_paths` on a connection whose transport cannot narrow a call's scope (`acms mcp`): the
 * same tool run by the server's own MCP endpoint, whose in-process calls can; undefined where the RPCs can
 * narrow (the server itself) or nothing can forward.
 */
async function forwardedSearch(env: ToolEnv, args: Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult | undefined> {
  let ctx;
  try {
    ctx = env.contextOf(extra);
  } catch (err) {
    return errorResult(err);
  }
  if (ctx.narrowPaths || !ctx.forwardTool) return undefined;
  try {
    return await ctx.forwardTool("search", args, extra._meta, extra.signal);
  } catch (err) {
    return errorResult(err);
  }
}
