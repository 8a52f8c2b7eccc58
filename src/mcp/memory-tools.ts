import { createClient } from "@connectrpc/connect";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { ContextTierService, Role, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { runTool, type ToolEnv } from "./run-tool.js";
import { fragmentOut, fragmentShape, scopeIdArg, scopedAnswer, TIER_NAMES, toolOutput } from "./wire-shapes.js";

const TIERS = { hot: Tier.HOT, warm: Tier.WARM, cold: Tier.COLD } as const;
const ROLES = { strategist: Role.STRATEGIST, executor: Role.EXECUTOR, reviewer: Role.REVIEWER } as const;

/** `remember` (StoreFragment), `recall` (GetForActor) and `forget` (DeleteFragment): the agent's tiered memory. */
export function registerMemoryTools(server: McpServer, env: ToolEnv): void {
  server.registerTool(
    "remember",
    {
      title: "Remember a fragment of context",
      description:
        "Store a piece of agent context (a decision, a finding, a summary) so later calls and other agents of the same " +
        "projects can recall it. It belongs to one project of the scope (project_name, required) and optionally to one " +
        "in-scope resource. tier: hot (the default: small, always at hand), warm, " +
        "or cold (archived, summarised). Budgets are per project: an over-full tier moves its least recently used " +
        "fragments down (listed in `displaced`). Answers the stored fragment with its `fragment_id` (for `forget`).",
      inputSchema: {
        content: z.string().describe("the text to remember"),
        tier: z.enum(["hot", "warm", "cold"]).optional().describe("hot (default), warm or cold"),
        project_name: z.string().describe("the scope project it belongs to, `namespace/name`"),
        resource_id: z.string().optional().describe("an in-scope resource it is about"),
        metadata: z.record(z.string(), z.string()).optional().describe("string key/value pairs kept with it"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput({
        fragment: fragmentShape,
        displaced: z.array(z.object({ fragment_id: z.string(), from_tier: z.string(), to_tier: z.string(), evicted: z.boolean() })),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) => {
        const res = await createClient(ContextTierService, call.transport).storeFragment(
          {
            fragment: {
              content: args.content,
              tier: args.tier ? TIERS[args.tier] : Tier.UNSPECIFIED,
              projectName: args.project_name,
              resourceId: args.resource_id ?? "",
              metadata: args.metadata ?? {},
            },
          },
          call.options,
        );
        return {
          fragment: fragmentOut(res.fragment),
          displaced: res.displaced.map((d) => ({
            fragment_id: d.fragmentId,
            from_tier: TIER_NAMES[d.fromTier],
            to_tier: TIER_NAMES[d.toTier],
            evicted: d.evicted,
          })),
        };
      }),
  );

  server.registerTool(
    "recall",
    {
      title: "Recall remembered context",
      description:
        "The fragments remembered in the scope's projects that a role sees: strategist (hot, warm and cold: " +
        "everything), executor (hot and warm) or reviewer (hot only). project_names limits it to some of the " +
        "scope's projects (default: all of them). Answers the fragments with their content, tier and ids.",
      inputSchema: {
        role: z.enum(["strategist", "executor", "reviewer"]).optional().describe("whose view (default strategist: every tier)"),
        project_names: z.array(z.string()).optional().describe("scope projects to recall from (default: every project of the scope)"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput({ fragments: z.array(fragmentShape), ...scopedAnswer }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) => {
        const res = await createClient(ContextTierService, call.transport).getForActor(
          { role: ROLES[args.role ?? "strategist"], projectNames: args.project_names ?? [], includeFullContent: true },
          call.options,
        );
        return { fragments: res.fragments.map(fragmentOut), scope_id: res.scopeId, exhaustive: res.exhaustive };
      }),
  );

  server.registerTool(
    "forget",
    {
      title: "Forget a fragment",
      description:
        "Delete a remembered fragment (by the `fragment_id` that `remember` or `recall` gave) from whatever tier holds " +
        "it. Answers whether it existed in the scope.",
      inputSchema: {
        fragment_id: z.string().describe("the fragment to delete"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput({ fragment_id: z.string(), deleted: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) => {
        const res = await createClient(ContextTierService, call.transport).deleteFragment({ fragmentId: args.fragment_id }, call.options);
        return { fragment_id: args.fragment_id, deleted: res.deleted };
      }),
  );
}
