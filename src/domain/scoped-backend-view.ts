import { scopeViolation } from "./scope-violation.js";
import { compilePathFilter, type PathFilter } from "./path-filter.js";
import type { ResourceScope, TemporalScope } from "./scope.js";

/**
 * What a backend may see for one call: the effective resource set, the projects, the path filter and
 * the temporal setting of the call's scope. Backends are handed only this, never an unscoped query,
 * and every result is checked against it once more on the way out.
 */
export interface ScopedBackendView {
  readonly scopeId: string;
  readonly principal: string;
  readonly projectNames: readonly string[];
  /** Effective resource ids, sorted. */
  readonly resourceIds: readonly string[];
  readonly resourceSet: ReadonlySet<string>;
  readonly projectSet: ReadonlySet<string>;
  readonly paths: PathFilter;
  readonly temporalScope: TemporalScope;
  /** The scope itself, for handlers that report it. */
  readonly scope: ResourceScope;
  /** Whether a unit of `resourceId` at `path` is visible. */
  allows(resourceId: string, path?: string): boolean;
}

/**
 * Builds the view of a scope. Throws a ScopeViolation when deny lists emptied a scope that had
 * resources: such a scope can never answer anything, and saying so beats silently answering empty.
 * `reachable` (default: all of the scope's resources) is the part of the stored set still reachable through
 * the scope's projects' current links: a resource unlinked (or deleted) since is simply no longer seen,
 * which empties a scope silently rather than refusing it (it refuses nothing it did not refuse before).
 */
export function createScopedBackendView(scope: ResourceScope, reachable: readonly string[] = scope.resourceIds): ScopedBackendView {
  if (scope.resourceIds.length === 0 && scope.deniedResourceIds.length > 0) {
    throw scopeViolation({
      available: scope.projectNames,
      resources: scope.deniedResourceIds,
      reason: "the scope's effective resource set is empty: every resource is denied",
      message: `Scope ${scope.scopeId} has no resources left: every resource of ${scope.projectNames.join(", ")} is denied`,
    });
  }
  const resourceSet = new Set(reachable);
  const paths = compilePathFilter(scope.includePaths, scope.excludePaths);
  return {
    scopeId: scope.scopeId,
    principal: scope.owner,
    projectNames: scope.projectNames,
    resourceIds: reachable,
    resourceSet,
    projectSet: new Set(scope.projectNames),
    paths,
    temporalScope: scope.temporalScope,
    scope,
    allows(resourceId: string, path?: string): boolean {
      if (!resourceSet.has(resourceId)) return false;
      return path === undefined || paths.matchesAll || paths.matches(path);
    },
  };
}
