/**
 * viewNarrowedToPaths (the MCP `search` tool's include_paths, applied in the access interceptor): it only ever
 * narrows a view, intersecting the scope's own include and exclude lists with the new globs, and holds the
 * globs to the scope glob budget with the argument's field names.
 */
import { InvalidArgumentError } from "../../src/domain/errors.js";
import type { ResourceScope } from "../../src/domain/scope.js";
import { createScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { viewNarrowedToPaths } from "../../src/domain/view-narrowed-to-paths.js";

const R1 = "01J00000000000000000000001";
const R2 = "01J00000000000000000000002";

function scope(includePaths: string[], excludePaths: string[]): ResourceScope {
  return {
    scopeId: "01J0000000000000000000SCOP",
    owner: "writer",
    projectNames: ["local/api"],
    resourceIds: [R1],
    deniedResourceIds: [],
    includeResources: [],
    excludeResources: [],
    includePaths,
    excludePaths,
    temporalScope: "current",
    parentScopeId: "",
    expandDescendants: true,
    createdAt: new Date(0),
  };
}

test("the new globs are intersected with the scope's own lists: nothing the scope hides becomes visible", () => {
  const base = createScopedBackendView(scope(["guide/**", "src/**"], ["guide/secret.md"]));
  const view = viewNarrowedToPaths(base, ["**"], "include_paths");
  for (const path of ["guide/a.md", "src/x.ts"]) expect(view.allows(R1, path)).toBe(true);
  for (const path of ["guide/secret.md", "other/a.md", "vault.md"]) expect(view.allows(R1, path)).toBe(false);
  expect(view.allows(R2, "guide/a.md")).toBe(false);
  const guide = viewNarrowedToPaths(base, ["guide/**", "other/**"], "include_paths");
  expect(["guide/a.md", "guide/secret.md", "src/x.ts", "other/a.md"].filter((p) => guide.paths.matches(p))).toEqual(["guide/a.md"]);
  expect(guide.paths.matchesAll).toBe(false);
  // The scope and its own lists are unchanged: it is the same scope, seen through a narrower filter.
  expect(guide.scope).toBe(base.scope);
  expect(guide.resourceIds).toEqual(base.resourceIds);
});

test("a scope with no path globs is narrowed to the new ones; an empty list leaves the view as it is", () => {
  const base = createScopedBackendView(scope([], []));
  expect(viewNarrowedToPaths(base, [], "include_paths")).toBe(base);
  const view = viewNarrowedToPaths(base, ["src/*.ts"], "include_paths");
  expect(view.paths.matches("src/a.ts")).toBe(true);
  expect(view.paths.matches("src/deep/a.ts")).toBe(false);
  expect(view.allows(R1)).toBe(true);
});

test("bad globs and globs past the scope's budget are INVALID_ARGUMENT naming the argument", () => {
  const base = createScopedBackendView(scope(["guide/**"], []));
  const fields = (globs: string[]) => {
    try {
      viewNarrowedToPaths(base, globs, "include_paths");
    } catch (err) {
      return (err as InvalidArgumentError).violations.map((v) => v.field);
    }
    return [];
  };
  expect(fields(["ok/**", "../up", "/abs"])).toEqual(["include_paths[1]", "include_paths[2]"]);
  expect(fields(Array.from({ length: 512 }, (_, i) => `d${i}/**`))).toEqual(["include_paths"]);
  expect(fields(Array.from({ length: 50 }, (_, i) => `d${i}/${"a".repeat(990)}`))).toEqual(["include_paths"]);
});
