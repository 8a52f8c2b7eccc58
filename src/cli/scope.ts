import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";

const actions = () => import("./scope-actions.js");

function collect(value: string, previous: string[]): string[] {
  return [
    ...previous,
    ...value
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  ];
}

/**
 * `acms scope resolve|narrow|show`: makes the frozen scope every search names, narrows it, or shows one.
 * `resolve -q` prints only the id, for `export ACMS_SCOPE=$(acms scope resolve --project local/x -q)`.
 * The bodies are in `scope-actions.ts`, loaded only when one runs.
 */
export function scopeCommand(io: CliIo): Command {
  const scope = new Command("scope").description("resolve, narrow and show scopes");

  addConnectionOptions(
    scope
      .command("resolve")
      .description("resolve projects, resource allow/deny lists and path filters into a stored scope")
      .option("--project <name>", "project namespace/name (repeatable or comma-separated)", collect, [])
      .option("--include <resource>", "keep only these resources: ULID, alias or ns/project:alias (repeatable)", collect, [])
      .option("--exclude <resource>", "drop these resources (repeatable)", collect, [])
      .option("--include-path <glob>", "only documents matching one of these globs (repeatable)", collect, [])
      .option("--exclude-path <glob>", "no documents matching these globs (repeatable)", collect, [])
      .option("--temporal <mode>", "current, recent or all", "current")
      .option("--no-expand-descendants", "keep exactly the linked resources: no descendants, and allow and deny only the named resources")
      .option("-q, --quiet", "print only the scope id"),
    { scoped: false },
  ).action(connectedAction(io, async () => (await actions()).resolveScope(io)));

  addConnectionOptions(
    scope
      .command("narrow")
      .description("make a narrower child of the --scope scope")
      .option("--deny <resource>", "deny these resources with their descendants: ULID, alias or ns/project:alias (repeatable)", collect, [])
      .option("--project <name>", "keep only these of the parent's projects (repeatable)", collect, [])
      .option("--exclude-path <glob>", "path globs to exclude, added to the parent's (repeatable)", collect, [])
      .option("-q, --quiet", "print only the new scope id"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).narrowScope(io)));

  addConnectionOptions(
    scope.command("show").description("show a stored scope").argument("[scope-id]", "the scope (default --scope / ACMS_SCOPE)"),
    {
      scoped: true,
    },
  ).action(connectedAction(io, async () => (await actions()).showScope(io)));
  return scope;
}
