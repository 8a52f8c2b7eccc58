import type { CallOptions } from "@connectrpc/connect";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { rpcOptions, type McpCallContext } from "./mcp-call-context.js";
import type { ScopeLineage } from "./scope-lineage.js";
import { errorResult, refusalResult, toolSuccess } from "./tool-result.js";

/** What every tool runs with: the connection's context and the lineage that checks `scope_id` arguments. */
export interface ToolEnv {
  readonly ctx: McpCallContext;
  readonly lineage: ScopeLineage;
}

/** The part of the SDK's handler `extra` a tool uses: the request's `_meta` (trace context) and its cancellation. */
export interface ToolExtra {
  _meta?: Record<string, unknown>;
  signal: AbortSignal;
}

/** The scope a tool runs under and the call options of its RPCs (key, scope, trace context, cancellation). */
export interface ToolCall {
  readonly scopeId: string;
  readonly options: CallOptions;
  /** Call options with no scope header (unscoped RPCs: GetScope, ListResources). */
  readonly unscoped: CallOptions;
}

/**
 * Runs one tool call: settles the scope it runs under (`scope_id`, checked by the lineage; a refusal is the
 * tool's answer), runs `body`, and turns its answer into structured content beside text, or any error into
 * an `isError` result with its gRPC code name (see `errorResult`).
 */
export async function runTool(
  env: ToolEnv,
  scopeArg: string | undefined,
  extra: ToolExtra,
  body: (call: ToolCall) => Promise<Record<string, unknown>>,
): Promise<CallToolResult> {
  try {
    const scopeId = await env.lineage.effectiveScope(env.ctx, scopeArg, extra._meta, extra.signal);
    if (typeof scopeId !== "string") return refusalResult(scopeId);
    const call: ToolCall = {
      scopeId,
      options: rpcOptions(env.ctx, scopeId, extra._meta, extra.signal),
      unscoped: rpcOptions(env.ctx, undefined, extra._meta, extra.signal),
    };
    return toolSuccess(await body(call));
  } catch (err) {
    return errorResult(err);
  }
}
