import { createHash } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { rpcOptions, type McpCallContext, type McpRequestMeta } from "./mcp-call-context.js";
import type { Refusal } from "./tool-result.js";

/** How many parents a `scope_id` may be from the connection's scope (a chain of NarrowScope calls). */
export const MAX_NARROWING_DEPTH = 64;

/** How many proven (caller, connection scope, scope id) facts a lineage keeps before it starts over. */
const MAX_PROVEN = 10_000;

/**
 * Which `scope_id` arguments a connection may use: its own scope, or a scope narrowed from it (directly or
 * through a chain of NarrowScope calls). It asks GetScope with the caller's key, so a scope of another
 * principal is not found and refused like any other; what it proved is kept (scopes are immutable, a
 * parent never changes), keyed by a hash of the caller's key, so a later call pays nothing.
 */
export class ScopeLineage {
  private readonly proven = new Set<string>();

  /**
   * The scope a tool call runs under: `requested` when it is the connection's scope or narrowed from it,
   * the connection's scope when `requested` is absent; otherwise a refusal naming the scope's projects.
   */
  async effectiveScope(
    ctx: McpCallContext,
    requested: string | undefined,
    meta: McpRequestMeta,
    signal?: AbortSignal,
  ): Promise<string | Refusal> {
    if (requested === undefined || requested === "" || requested === ctx.scopeId) return ctx.scopeId;
    const fact = `${createHash("sha256").update(ctx.authorization).digest("hex")}\0${ctx.scopeId}\0${requested}`;
    if (this.proven.has(fact)) return requested;
    const scopes = createClient(ScopeService, ctx.transport);
    let current = requested;
    for (let depth = 0; depth < MAX_NARROWING_DEPTH; depth++) {
      let parent: string;
      try {
        parent = (await scopes.getScope({ scopeId: current }, rpcOptions(ctx, undefined, meta, signal))).scope?.parentScopeId ?? "";
      } catch (err) {
        const e = ConnectError.from(err);
        if (e.code !== Code.NotFound && e.code !== Code.InvalidArgument) throw e;
        break;
      }
      if (parent === ctx.scopeId) {
        if (this.proven.size >= MAX_PROVEN) this.proven.clear();
        this.proven.add(fact);
        return requested;
      }
      if (parent === "") break;
      current = parent;
    }
    return {
      code: "PERMISSION_DENIED",
      message: `scope_id ${requested} is neither this connection's scope (acms-scope ${ctx.scopeId}) nor a scope narrowed from it`,
      resource_ids: [],
      project_names: [],
      scope_project_names: await this.projectsOf(ctx, meta, signal),
      reason: "scope_id not derived from the connection's scope",
    };
  }

  /** The connection scope's projects, for a refusal's `scope_project_names` (empty when it cannot be read). */
  private async projectsOf(ctx: McpCallContext, meta: McpRequestMeta, signal?: AbortSignal): Promise<string[]> {
    try {
      const res = await createClient(ScopeService, ctx.transport).getScope(
        { scopeId: ctx.scopeId },
        rpcOptions(ctx, undefined, meta, signal),
      );
      return [...(res.scope?.projectNames ?? [])];
    } catch {
      return [];
    }
  }
}
