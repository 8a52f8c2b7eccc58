import { InvalidArgumentError } from "./errors.js";
import { compilePathFilter, type PathFilter } from "./path-filter.js";
import { scopeGlobViolations } from "./scope-glob-budget.js";
import type { ScopedBackendView } from "./scoped-backend-view.js";

/**
 * The view of the same scope further restricted to paths matching one of `includePaths`: a path passes when the
 * scope's own filter lets it through AND one of the new globs matches it. It can only narrow: the scope's
 * resources, its include list and its exclude list all still apply (the new list is intersected with them,
 * never put in their place), so no glob, `**` included, shows anything the scope does not. The globs are
 * checked as ResolveScope checks a scope's `include_paths` (each glob, and the total with the scope's own
 * globs against SCOPE_GLOB_BUDGET: count and compiled size); a violation is INVALID_ARGUMENT naming
 * `field[i]` (or `field` for the budget). Backends see an ordinary view: `paths.matches` and `allows` are the
 * narrowed ones, so each engine applies the list inside its query like any scope's path filter. `paths`'
 * `includePaths`/`excludePaths` stay the scope's own lists (`matches` is the rule).
 * @example viewNarrowedToPaths(view, ["src/**\/*.ts"], "include_paths")
 */
export function viewNarrowedToPaths(view: ScopedBackendView, includePaths: readonly string[], field: string): ScopedBackendView {
  if (includePaths.length === 0) return view;
  const violations = scopeGlobViolations([
    { field: "scope.include_paths", patterns: view.scope.includePaths, inherited: true },
    { field: "scope.exclude_paths", patterns: view.scope.excludePaths, inherited: true },
    { field, patterns: includePaths },
  ]);
  if (violations.length > 0) throw new InvalidArgumentError(violations);
  const own = view.paths;
  const extra = compilePathFilter(includePaths, []);
  const paths: PathFilter = {
    matchesAll: false,
    includePaths: own.includePaths,
    excludePaths: own.excludePaths,
    states: own.states + extra.states,
    matches: (path: string) => extra.matches(path) && (own.matchesAll || own.matches(path)),
  };
  return {
    ...view,
    paths,
    allows: (resourceId: string, path?: string) => view.allows(resourceId) && (path === undefined || paths.matches(path)),
  };
}
