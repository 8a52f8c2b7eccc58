import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";
import { CliUsageError } from "./cli-usage-error.js";

const actions = () => import("./tiers-actions.js");

function parseMeta(value: string, previous: Record<string, string>): Record<string, string> {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new CliUsageError(`--meta must be key=value, got "${value}"`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/**
 * `acms tiers store|get|list|metrics|promote|demote|evict|delete`: the agent context tiers (hot, warm, cold) under the --scope scope.
 * The bodies are in `tiers-actions.ts`, loaded only when one runs.
 */
export function tiersCommand(io: CliIo): Command {
  const tiers = new Command("tiers").description("store and read agent context fragments in the hot, warm and cold tiers");

  addConnectionOptions(
    tiers
      .command("store")
      .description("store a fragment (new, or replacing one with the same --id)")
      .requiredOption("--project <name>", "the project the fragment belongs to (must be in scope)")
      .requiredOption("--content <text|@file|->", "the content: text, @file, or - for standard input")
      .option("--tier <tier>", "hot, warm or cold", "hot")
      .option("--id <fragment-id>", "the fragment id (default: the server assigns one)")
      .option("--resource <resource-id>", "the resource the fragment is about (must be in scope)")
      .option("--meta <key=value>", "metadata (repeatable)", parseMeta, {}),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).storeFragment(io)));

  addConnectionOptions(tiers.command("get").description("print a fragment").argument("<fragment-id>"), { scoped: true }).action(
    connectedAction(io, async () => (await actions()).getFragment(io)),
  );

  addConnectionOptions(
    tiers
      .command("list")
      .description("the fragments an actor sees (strategist: hot+warm+cold, executor: hot+warm, reviewer: hot)")
      .option("--role <role>", "strategist, executor or reviewer", "strategist")
      .option(
        "--project <name>",
        "only these projects (repeatable; default every project of the scope)",
        (v: string, p: string[]) => [...p, v],
        [],
      ),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).listFragments(io)));

  addConnectionOptions(tiers.command("metrics").description("hits, misses, population and movements per tier"), { scoped: true }).action(
    connectedAction(io, async () => (await actions()).fragmentMetrics(io)),
  );
  addConnectionOptions(
    tiers
      .command("promote")
      .description("move a fragment one tier up (cold -> warm -> hot); fragments it displaces are listed")
      .argument("<fragment-id>"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).promoteFragment(io)));

  addConnectionOptions(
    tiers
      .command("demote")
      .description("move a fragment one tier down (hot -> warm -> cold); fragments it displaces are listed")
      .argument("<fragment-id>"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).demoteFragment(io)));

  addConnectionOptions(
    tiers
      .command("evict")
      .description("evict the least recently used fragments of a tier: hot and warm move one tier down, cold deletes them")
      .requiredOption("--tier <tier>", "hot, warm or cold")
      .requiredOption("--count <n>", "how many fragments (> 0)"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).evictFragments(io)));

  addConnectionOptions(
    tiers
      .command("delete")
      .description("delete a fragment from whichever tier holds it (a cold fragment's file too)")
      .argument("<fragment-id>"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).deleteFragment(io)));
  return tiers;
}
