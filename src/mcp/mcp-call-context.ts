import type { CallOptions, ContextValues, Transport } from "@connectrpc/connect";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * Who calls and where the calls go, for one MCP connection (one HTTP request, or one `acms mcp` process):
 * every tool runs as an RPC over `transport` with these headers, so it meets exactly the checks, quotas,
 * audit and metrics of that RPC. The server hands an in-process transport (its own router and interceptors);
 * `acms mcp` hands a network transport to a running server.
 */
export interface McpCallContext {
  /** Where the RPCs go; it adds no credentials of its own. */
  readonly transport: Transport;
  /** The caller's `authorization` header, passed on as it came (`Bearer <key>`). */
  readonly authorization: string;
  /** The connection's scope (`acms-scope`): every tool runs under it or under a scope narrowed from it. */
  readonly scopeId: string;
  /** The W3C trace context of the connection itself (HTTP header), used when a call's `_meta` names none. */
  readonly traceparent?: string;
  /**
   * The context values that narrow one RPC's scope to paths matching `includePaths`, applied by the RPC's own
   * access check (the server's in-process transport carries them; no wire field does). Absent where the
   * transport cannot carry them (a network transport): see `forwardTool`.
   */
  readonly narrowPaths?: (includePaths: readonly string[]) => ContextValues;
  /**
   * Runs a tool on the server's own MCP endpoint (`POST /mcp`) with the same key and scope, for what only the
   * server can do in process (`search` with `include_paths`); `acms mcp` gives it, the server needs none.
   */
  readonly forwardTool?: (
    name: string,
    args: Record<string, unknown>,
    meta: McpRequestMeta,
    signal?: AbortSignal,
  ) => Promise<CallToolResult>;
}

/** The `_meta` of an MCP request, as the SDK hands it to a handler. */
export type McpRequestMeta = Record<string, unknown> | undefined;

/** The call options of one RPC: the caller's key, the scope it runs under, its trace context and cancellation. */
export function rpcOptions(ctx: McpCallContext, scopeId: string | undefined, meta: McpRequestMeta, signal?: AbortSignal): CallOptions {
  const headers: Record<string, string> = { authorization: ctx.authorization };
  if (scopeId !== undefined) headers["acms-scope"] = scopeId;
  const traceparent = typeof meta?.traceparent === "string" ? meta.traceparent : ctx.traceparent;
  if (traceparent) headers.traceparent = traceparent;
  if (typeof meta?.tracestate === "string") headers.tracestate = meta.tracestate;
  return { headers, signal };
}
