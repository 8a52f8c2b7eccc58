import type { ResourceScope } from "../../domain/scope.js";
import type { RegistryStore } from "../../ports/registry-store.js";

/**
 * The resources of a stored scope still reachable through its projects' current links (and, when the scope
 * expands descendants, their DAG descendants), in the scope's order. A scope is frozen when resolved, but a
 * link may be removed afterwards (UnlinkResource, or a resource's deletion): a resource the scope reached
 * only through that link must stop being seen, so a view is built from this, not from the stored list.
 * Never more than the stored list: the registry can only take resources out of a scope, never add them.
 * A resource that is gone (erased, or being erased) stays in the list: API.md's erasure rule keeps a stored
 * scope's ids and has them find nothing (its data is gone, or hidden while the erasure runs), so naming
 * it is refused no more than before; only a resource that still exists but lost its link drops out.
 */
export async function reachableResources(registry: RegistryStore, scope: ResourceScope): Promise<readonly string[]> {
  if (scope.resourceIds.length === 0) return scope.resourceIds;
  const linked = (await registry.linksOfProjects(scope.projectNames)).map((l) => l.resourceId);
  const reach = scope.expandDescendants ? await registry.withDescendants(linked) : new Set(linked);
  const unreached = scope.resourceIds.filter((id) => !reach.has(id));
  if (unreached.length === 0) return scope.resourceIds;
  const records = await Promise.all(unreached.map((id) => registry.getResource(id)));
  const dropped = new Set(unreached.filter((_, i) => records[i] !== undefined && records[i]!.erasing !== true));
  return dropped.size === 0 ? scope.resourceIds : scope.resourceIds.filter((id) => !dropped.has(id));
}
