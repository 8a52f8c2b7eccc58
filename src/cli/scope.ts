import { Command } from "commander";
import { ResourceScopeSchema, type ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction, requireScope } from "./connection-options.js";
import { printMessageJson } from "./print-json.js";
import { CliUsageError } from "./cli-error.js";

function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(",").map((s) => s.trim()).filter((s) => s.length > 0)];
}

const TEMPORAL = ["current", "recent", "all"];

function printScope(io: CliIo, scope: ResourceScope | undefined, json: boolean, quiet: boolean): void {
  if (!scope) throw new Error("the server answered without a scope");
  if (quiet) {
    io.stdout.write(`${scope.scopeId}\n`);
    return;
  }
  if (json) {
    printMessageJson(io, ResourceScopeSchema, scope);
    return;
  }
  const lines = [
    `scope ${scope.scopeId}`,
    `  projects:  ${scope.projectNames.join(", ") || "(none)"}`,
    `  resources: ${scope.resourceIds.length}${scope.resourceIds.length > 0 ? ` (${scope.resourceIds.join(", ")})` : ""}`,
    `  temporal:  ${scope.temporalScope || "current"}`,
  ];
  if (scope.includeResources.length > 0) lines.push(`  include resources: ${scope.includeResources.join(", ")}`);
  if (scope.excludeResources.length > 0) lines.push(`  exclude resources: ${scope.excludeResources.join(", ")}`);
  if (scope.deniedResourceIds.length > 0) lines.push(`  denied:    ${scope.deniedResourceIds.join(", ")}`);
  if (scope.includePaths.length > 0) lines.push(`  include paths: ${scope.includePaths.join(", ")}`);
  if (scope.excludePaths.length > 0) lines.push(`  exclude paths: ${scope.excludePaths.join(", ")}`);
  if (scope.parentScopeId) lines.push(`  parent:    ${scope.parentScopeId}`);
  io.stdout.write(`${lines.join("\n")}\n`);
}

/**
 * `acms scope resolve|narrow|show`: makes the frozen scope every search names, narrows it, or shows one.
 * `resolve -q` prints only the id, for `export ACMS_SCOPE=$(acms scope resolve --project local/x -q)`.
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
  ).action(
    connectedAction(io, async ({ conn, client, cmd }) => {
      const o = cmd.opts<{
        project: string[];
        include: string[];
        exclude: string[];
        includePath: string[];
        excludePath: string[];
        temporal: string;
        expandDescendants: boolean;
        quiet?: boolean;
      }>();
      if (o.project.length === 0) throw new CliUsageError("--project is required (at least one namespace/name)");
      if (!TEMPORAL.includes(o.temporal)) throw new CliUsageError(`--temporal must be one of ${TEMPORAL.join(", ")}`);
      const res = await client.scope.resolveScope({
        projects: o.project,
        includeResources: o.include,
        excludeResources: o.exclude,
        includePaths: o.includePath,
        excludePaths: o.excludePath,
        temporalScope: o.temporal,
        expandDescendants: o.expandDescendants,
      });
      printScope(io, res.scope, conn.json, o.quiet === true);
    }),
  );

  addConnectionOptions(
    scope
      .command("narrow")
      .description("make a narrower child of the --scope scope")
      .option("--deny <resource-id>", "resource ids to deny, with their descendants (repeatable)", collect, [])
      .option("--project <name>", "keep only these of the parent's projects (repeatable)", collect, [])
      .option("--exclude-path <glob>", "path globs to exclude, added to the parent's (repeatable)", collect, [])
      .option("-q, --quiet", "print only the new scope id"),
    { scoped: true },
  ).action(
    connectedAction(io, async ({ conn, client, cmd }) => {
      requireScope(conn);
      const o = cmd.opts<{ deny: string[]; project: string[]; excludePath: string[]; quiet?: boolean }>();
      if (o.deny.length === 0 && o.project.length === 0 && o.excludePath.length === 0) {
        throw new CliUsageError("nothing to narrow: give --deny, --project or --exclude-path");
      }
      const res = await client.scope.narrowScope({ denyResourceIds: o.deny, projects: o.project, excludePaths: o.excludePath });
      printScope(io, res.scope, conn.json, o.quiet === true);
    }),
  );

  addConnectionOptions(scope.command("show").description("show a stored scope").argument("[scope-id]", "the scope (default --scope / ACMS_SCOPE)"), {
    scoped: true,
  }).action(
    connectedAction(io, async ({ conn, client }, scopeId: string | undefined) => {
      const id = scopeId ?? requireScope(conn);
      const res = await client.scope.getScope({ scopeId: id });
      printScope(io, res.scope, conn.json, false);
    }),
  );
  return scope;
}
