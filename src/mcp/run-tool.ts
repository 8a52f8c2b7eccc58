import type { CallOptions, Transport } from "@connectrpc/connect";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { rpcOptions, type McpCallContext } from "./mcp-call-context.js";
import type { ScopeLineage } from "./scope-lineage.js";
import { errorResult, refusalResult, toolSuccess } from "./tool-result.js";

/** The part of the SDK's handler `extra` a tool uses: the request's `_meta` (trace context), its cancellation and auth info. */
export interface ToolExtra {
  _meta?: Record<string, unknown>;
  signal: AbortSignal;
  authInfo?: AuthInfo;
}

/**
 * What every tool runs with: where a request's context comes from (one fixed context for `acms mcp`; the
 * HTTP request's, handed in its auth info, for POST /mcp) and the lineage that checks `scope_id` arguments.
 */
export interface ToolEnv {
  readonly contextOf: (extra: ToolExtra) => McpCallContext;
  readonly lineage: ScopeLineage;
}

/** The scope a tool runs under and the call options of its RPCs (key, scope, trace context, cancellation). */
export interface ToolCall {
  /** Where the tool's RPCs go. */
  readonly transport: Transport;
  readonly scopeId: string;
  readonly options: CallOptions;
  /** Call options with no scope header (unscoped RPCs: GetScope, ListResources). */
  readonly unscoped: CallOptions;
  /** The connection's context (what the transport can carry: `narrowPaths`). */
  readonly context: McpCallContext;
}

/**
 * Runs one tool call: settles the scope it runs under (`scope_id`, checked by the lineage; a refusal is the
 * tool's answer), runs `body`, and turns its answer into structured content beside text, or any error into
 * an `isError` result with its gRPC code name (see `errorResult`; `renamed`: wire field names to argument names).
 */
export async function runTool(
  env: ToolEnv,
  scopeArg: string | undefined,
  extra: ToolExtra,
  body: (call: ToolCall) => Promise<Record<string, unknown>>,
  renamed?: Readonly<Record<string, string>>,
): Promise<CallToolResult> {
  try {
    const ctx = env.contextOf(extra);
    const scopeId = await env.lineage.effectiveScope(ctx, scopeArg, extra._meta, extra.signal);
    if (typeof scopeId !== "string") return refusalResult(scopeId);
    const call: ToolCall = {
      transport: ctx.transport,
      scopeId,
      options: rpcOptions(ctx, scopeId, extra._meta, extra.signal),
      unscoped: rpcOptions(ctx, undefined, extra._meta, extra.signal),
      context: ctx,
    };
    return toolSuccess(await body(call));
  } catch (err) {
    return errorResult(err, renamed);
  }
}
