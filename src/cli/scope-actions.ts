import { ResourceScopeSchema, type ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import type { CliIo } from "./cli-io.js";
import { CliUsageError } from "./cli-usage-error.js";
import { requireScope, type ConnectedBody } from "./connection-options.js";
import { printMessageJson } from "./print-json.js";
import { resolveDenyNames } from "./resolve-deny-names.js";

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

/** The body of `acms scope resolve`. */
export const resolveScope =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client, cmd }) => {
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
  };

/** The body of `acms scope narrow`. */
export const narrowScope =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client, cmd }) => {
    requireScope(conn);
    const o = cmd.opts<{ deny: string[]; project: string[]; excludePath: string[]; quiet?: boolean }>();
    if (o.deny.length === 0 && o.project.length === 0 && o.excludePath.length === 0) {
      throw new CliUsageError("nothing to narrow: give --deny, --project or --exclude-path");
    }
    const denyResourceIds = await resolveDenyNames(client, requireScope(conn), o.deny);
    const res = await client.scope.narrowScope({ denyResourceIds, projects: o.project, excludePaths: o.excludePath });
    printScope(io, res.scope, conn.json, o.quiet === true);
  };

/** The body of `acms scope show`. */
export const showScope =
  (io: CliIo): ConnectedBody<[string | undefined]> =>
  async ({ conn, client }, scopeId) => {
    const id = scopeId ?? requireScope(conn);
    const res = await client.scope.getScope({ scopeId: id });
    printScope(io, res.scope, conn.json, false);
  };
