import type { ResourceScope } from "../../domain/scope.js";
import type { RegistryStore } from "../../ports/registry-store.js";

/**
 * The resources of a stored scope still reachable through its projects' current links (and, when the scope
 * expands descendants, their DAG descendants), in the scope's order. A scope is frozen when resolved, but a
 * link may be removed afterwards (UnlinkResource, or a resource's deletion): a resource the scope reached
 * only through that link must stop being seen, so a view is built from this, not from the stored list.
 * Never more than the stored list: the registry can only take resources out of a scope, never add them.
 */
export async function reachableResources(registry: RegistryStore, scope: ResourceScope): Promise<readonly string[]> {
  if (scope.resourceIds.length === 0) return scope.resourceIds;
  const linked = (await registry.linksOfProjects(scope.projectNames)).map((l) => l.resourceId);
  const reach = scope.expandDescendants ? await registry.withDescendants(linked) : new Set(linked);
  const kept = scope.resourceIds.filter((id) => reach.has(id));
  return kept.length === scope.resourceIds.length ? scope.resourceIds : kept;
}
