import { readFileSync } from "node:fs";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  DeleteFragmentResponseSchema,
  DemoteFragmentResponseSchema,
  EvictLruResponseSchema,
  FragmentSchema,
  GetMetricsResponseSchema,
  GetForActorResponseSchema,
  PromoteFragmentResponseSchema,
  Role,
  StoreFragmentResponseSchema,
  Tier,
  type DisplacedFragment,
  type Fragment,
} from "../../gen/acms/v1/tiers_pb.js";
import { outputWidth, type CliIo } from "./cli-io.js";
import { CliUsageError } from "./cli-usage-error.js";
import { requireScope, type ConnectedBody } from "./connection-options.js";
import { formatTable } from "./format-table.js";
import { parseIntFlag } from "./parse-numbers.js";
import { printMessageJson } from "./print-json.js";

const TIERS: Record<string, Tier> = { hot: Tier.HOT, warm: Tier.WARM, cold: Tier.COLD };
const ROLES: Record<string, Role> = { strategist: Role.STRATEGIST, executor: Role.EXECUTOR, reviewer: Role.REVIEWER };

function tierName(t: Tier): string {
  return t === Tier.UNSPECIFIED ? "-" : Tier[t].toLowerCase();
}

/** Content from `--content`: literal text, `@file`, or `-` for standard input. */
function readContent(raw: string): string {
  if (raw === "-") return readFileSync(0, "utf8");
  if (raw.startsWith("@")) {
    try {
      return readFileSync(raw.slice(1), "utf8");
    } catch (err) {
      throw new CliUsageError(`--content: cannot read ${raw.slice(1)}: ${(err as Error).message}`);
    }
  }
  return raw;
}

function printFragment(io: CliIo, f: Fragment | undefined): void {
  if (!f) throw new Error("the server answered without a fragment");
  io.stdout.write(
    `fragment ${f.fragmentId}\n  tier: ${tierName(f.tier)}  project: ${f.projectName}  tokens: ${f.tokenCount}` +
      `${f.resourceId ? `  resource: ${f.resourceId}` : ""}\n` +
      `${f.summary && f.summary !== f.content ? `  summary: ${f.summary.replace(/\s+/g, " ")}\n` : ""}` +
      `${f.content}${f.content.endsWith("\n") || f.content === "" ? "" : "\n"}`,
  );
}

/** The body of `acms tiers store`. */
export const storeFragment =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client, cmd }) => {
    requireScope(conn);
    const o = cmd.opts<{ project: string; content: string; tier: string; id?: string; resource?: string; meta: Record<string, string> }>();
    const tier = parseTier(o.tier);
    const res = await client.tiers.storeFragment({
      fragment: {
        fragmentId: o.id ?? "",
        content: readContent(o.content),
        tier,
        projectName: o.project,
        resourceId: o.resource ?? "",
        metadata: o.meta,
      },
    });
    if (conn.json) {
      printMessageJson(io, StoreFragmentResponseSchema, res);
      return;
    }
    const f = res.fragment;
    io.stdout.write(`stored ${f?.fragmentId} in ${tierName(f?.tier ?? Tier.UNSPECIFIED)} (${f?.tokenCount ?? 0} tokens)\n`);
    printDisplaced(io, res.displaced);
  };

/** One line per fragment a write displaced: moved down a tier, or evicted (deleted) from cold. */
function printDisplaced(io: CliIo, displaced: DisplacedFragment[]): void {
  for (const d of displaced) {
    io.stdout.write(
      d.evicted
        ? `  evicted ${d.fragmentId} from ${tierName(d.fromTier)}\n`
        : `  moved ${d.fragmentId} ${tierName(d.fromTier)} -> ${tierName(d.toTier)}\n`,
    );
  }
}

/** The tier named by `--tier`, or a usage error. */
function parseTier(raw: string): Tier {
  const tier = TIERS[raw.toLowerCase()];
  if (tier === undefined) throw new CliUsageError(`--tier must be hot, warm or cold, got "${raw}"`);
  return tier;
}

/** The bodies of `acms tiers promote` and `acms tiers demote`: one tier up or down, and what that displaced. */
function moveFragment(direction: "promote" | "demote") {
  return (io: CliIo): ConnectedBody<[string]> =>
    async ({ conn, client }, id) => {
      requireScope(conn);
      const res =
        direction === "promote"
          ? await client.tiers.promoteFragment({ fragmentId: id })
          : await client.tiers.demoteFragment({ fragmentId: id });
      if (conn.json) {
        printMessageJson(io, direction === "promote" ? PromoteFragmentResponseSchema : DemoteFragmentResponseSchema, res);
        return;
      }
      io.stdout.write(`${direction}d ${id} to ${tierName(res.fragment?.tier ?? Tier.UNSPECIFIED)}\n`);
      printDisplaced(io, res.displaced);
    };
}

/** The body of `acms tiers promote`. */
export const promoteFragment = moveFragment("promote");

/** The body of `acms tiers demote`. */
export const demoteFragment = moveFragment("demote");

/** The body of `acms tiers evict`. */
export const evictFragments =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client, cmd }) => {
    requireScope(conn);
    const o = cmd.opts<{ tier: string; count: string }>();
    const tier = parseTier(o.tier);
    const count = parseIntFlag("--count", o.count) ?? 0;
    if (count <= 0 || count > 0xffffffff) throw new CliUsageError(`--count must be greater than 0, got "${o.count}"`);
    const res = await client.tiers.evictLru({ tier, count });
    if (conn.json) {
      printMessageJson(io, EvictLruResponseSchema, res);
      return;
    }
    const from = tierName(tier);
    const fate = tier === Tier.HOT ? "moved to warm" : tier === Tier.WARM ? "moved to cold" : "deleted";
    io.stdout.write(`evicted ${res.fragmentIds.length} from ${from} (${fate})${res.fragmentIds.length > 0 ? ":" : ""}\n`);
    for (const id of res.fragmentIds) io.stdout.write(`  ${id}\n`);
  };

/** The body of `acms tiers get`. */
export const getFragment =
  (io: CliIo): ConnectedBody<[string]> =>
  async ({ conn, client }, id) => {
    requireScope(conn);
    const res = await client.tiers.getFragment({ fragmentId: id });
    if (conn.json) {
      if (!res.fragment) throw new Error("the server answered without a fragment");
      printMessageJson(io, FragmentSchema, res.fragment);
    } else printFragment(io, res.fragment);
  };

/** The body of `acms tiers list`. */
export const listFragments =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client, cmd }) => {
    requireScope(conn);
    const o = cmd.opts<{ role: string; project: string[] }>();
    const role = ROLES[o.role.toLowerCase()];
    if (role === undefined) throw new CliUsageError(`--role must be strategist, executor or reviewer, got "${o.role}"`);
    const res = await client.tiers.getForActor({ role, projectNames: o.project });
    if (conn.json) {
      printMessageJson(io, GetForActorResponseSchema, res);
      return;
    }
    if (res.fragments.length === 0) {
      io.stdout.write("no fragments\n");
      return;
    }
    const rows = res.fragments.map((f) => [
      f.fragmentId,
      tierName(f.tier),
      f.projectName,
      String(f.tokenCount),
      (f.summary || f.content).replace(/\s+/g, " "),
    ]);
    io.stdout.write(formatTable(["FRAGMENT", "TIER", "PROJECT", "TOKENS", "CONTENT"], rows, outputWidth(io)));
  };

/** The body of `acms tiers metrics`. */
export const fragmentMetrics =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client }) => {
    requireScope(conn);
    const m = await client.tiers.getMetrics({});
    if (conn.json) {
      printMessageJson(io, GetMetricsResponseSchema, m);
      return;
    }
    const rows = [
      ["hot", String(m.hotPopulation), String(m.hotTokens), String(m.hotHits), String(m.hotMisses)],
      ["warm", String(m.warmPopulation), String(m.warmTokens), String(m.warmHits), String(m.warmMisses)],
      ["cold", String(m.coldPopulation), String(m.coldTokens), String(m.coldHits), "-"],
    ];
    io.stdout.write(formatTable(["TIER", "FRAGMENTS", "TOKENS", "HITS", "MISSES"], rows));
    io.stdout.write(`promotions ${m.promotions}, demotions ${m.demotions}, evictions ${m.evictions}, misses ${m.misses}\n`);
  };

/** The body of `acms tiers delete`: exits non-zero when the scope holds no such fragment of the key. */
export const deleteFragment =
  (io: CliIo): ConnectedBody<[string]> =>
  async ({ conn, client }, id) => {
    requireScope(conn);
    const res = await client.tiers.deleteFragment({ fragmentId: id });
    if (conn.json) printMessageJson(io, DeleteFragmentResponseSchema, res);
    else if (res.deleted) io.stdout.write(`deleted ${id}\n`);
    if (!res.deleted) throw new ConnectError(`no fragment ${id} of this key in the scope: nothing deleted`, Code.NotFound);
  };
