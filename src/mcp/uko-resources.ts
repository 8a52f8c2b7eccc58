import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { rpcOptions } from "./mcp-call-context.js";
import type { ToolEnv } from "./run-tool.js";
import { errorResult, refusalResult } from "./tool-result.js";

/** The JSON-RPC error code of a refused `resources/read` (a server error code; its `data` is the refusal). */
export const RESOURCE_REFUSED = -32003;
/**
 * The `_meta` key of `resources/read` naming the scope to read under (MCP's read request has `uri` and `_meta`
 * only): the connection's scope or one narrowed from it, as every tool's `scope_id`; absent: the connection's.
 */
export const SCOPE_ID_META = "scope_id";

/** The JSON-RPC error code MCP gives a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * UKO URIs as MCP resources: `resources/read` with `uri = uko://<resource-id>/<path>[#<chunk>]` is FetchContent
 * of that one URI under the connection's scope, so it is scoped exactly as FetchContent is. A URI outside the
 * scope is a JSON-RPC error (code -32003) whose `data` is the refusal (`{code: "PERMISSION_DENIED",
 * resource_ids, project_names, scope_project_names}`); an in-scope URI that names no unit is -32002 (MCP's
 * "resource not found"); other failures carry their gRPC code name in `data.code`. `_meta.scope_id` reads under
 * a scope narrowed from the connection's (anything else is refused like a tool's `scope_id`). Resources are
 * reached by template, never listed: no RPC lists a scope's documents (the list would need one).
 */
export function registerUkoResources(server: McpServer, env: ToolEnv): void {
  const low = server.server;
  low.registerCapabilities({ resources: {} });
  low.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  low.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: "uko://{resource_id}/{+path}",
        name: "uko-unit",
        title: "A document or chunk in scope",
        description:
          "A document (`uko://<resource-id>/<path>`) or one chunk of it (`...#<chunk-index>`), as search results name " +
          "them. Only units of in-scope resources can be read.",
        mimeType: "text/plain",
      },
    ],
  }));
  low.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const uri = request.params.uri;
    const requested = request.params._meta?.[SCOPE_ID_META];
    if (requested !== undefined && typeof requested !== "string") {
      throw new McpError(ErrorCode.InvalidParams, `_meta.${SCOPE_ID_META} must be a string (a scope id)`, {
        code: "INVALID_ARGUMENT",
        field_violations: [{ field: `_meta.${SCOPE_ID_META}`, description: "must be a string (a scope id)" }],
      });
    }
    let items;
    try {
      const ctx = env.contextOf(extra);
      // The scope it reads under: the connection's, or one narrowed from it (the tools' `scope_id` check).
      const scopeId = await env.lineage.effectiveScope(ctx, requested, extra._meta, extra.signal);
      if (typeof scopeId !== "string") {
        const refusal = refusalResult(scopeId);
        throw new McpError(RESOURCE_REFUSED, refusal.content[0]?.type === "text" ? refusal.content[0].text : scopeId.message, scopeId);
      }
      const res = await createClient(RagService, ctx.transport).fetchContent(
        { ukoUris: [uri] },
        rpcOptions(ctx, scopeId, extra._meta, extra.signal),
      );
      items = res.items;
    } catch (err) {
      if (err instanceof McpError) throw err;
      const e = ConnectError.from(err);
      const failure = errorResult(e);
      const text = failure.content[0]?.type === "text" ? failure.content[0].text : e.rawMessage;
      const code =
        e.code === Code.PermissionDenied
          ? RESOURCE_REFUSED
          : e.code === Code.InvalidArgument
            ? ErrorCode.InvalidParams
            : ErrorCode.InternalError;
      throw new McpError(code, text, failure.structuredContent);
    }
    if (items.length === 0) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { code: "NOT_FOUND", uri });
    return {
      contents: items.map((item) => ({
        uri: item.ukoUri,
        mimeType: "text/plain",
        text: item.content,
        _meta: { resource_id: item.resourceId, path: item.path, metadata: { ...item.metadata } },
      })),
    };
  });
}
