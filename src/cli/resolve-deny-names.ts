import { resolveResourceName, type ScopeLink } from "../domain/scope-resolution.js";
import { isUlid } from "../domain/ulid-id.js";
import type { AcmsClient } from "../client/create-acms-client.js";
import { CliUsageError } from "./cli-usage-error.js";
import { collectAll } from "./collect-all.js";
import { listAllResources } from "../../clients/typescript/src/list-all.js";

/**
 * The resource ids that `scope narrow --deny` names, resolved the way `scope resolve --exclude` resolves its
 * names (the same domain rule): a ULID stands for itself (denying an id the parent lacks changes nothing), a
 * bare alias for every resource with that alias in one of the parent scope's projects, `namespace/project:alias`
 * for the one resource in that project. The aliases come from the API (GetScope, then ListResources per
 * project, which read keys may call). Every unknown or malformed name is reported at once, as a usage error.
 */
export async function resolveDenyNames(client: AcmsClient, scopeId: string, names: readonly string[]): Promise<string[]> {
  const ids = new Set(names.filter(isUlid));
  const named = names.filter((n) => !isUlid(n));
  if (named.length === 0) return [...ids];

  const { scope } = await client.scope.getScope({ scopeId });
  if (!scope) throw new Error("the server answered without a scope");
  const projects = new Set(scope.projectNames);
  const idsByAlias = new Map<string, ScopeLink[]>();
  for (const project of projects) {
    const resources = await collectAll(listAllResources(client, project, { pageSize: 1000 }));
    for (const r of resources) {
      const link: ScopeLink = { project, resourceId: r.id, alias: r.alias };
      idsByAlias.set(r.alias, [...(idsByAlias.get(r.alias) ?? []), link]);
    }
  }
  const problems: string[] = [];
  for (const name of named) {
    const hit = resolveResourceName("--deny", name, projects, new Set(scope.resourceIds), idsByAlias);
    if (Array.isArray(hit)) hit.forEach((id) => ids.add(id));
    else problems.push(hit.description);
  }
  if (problems.length > 0) throw new CliUsageError(`--deny: ${problems.join("; ")}`);
  return [...ids];
}
