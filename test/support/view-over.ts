import type { ResourceScope } from "../../src/domain/scope.js";
import { createScopedBackendView, type ScopedBackendView } from "../../src/domain/scoped-backend-view.js";

/** What a caller names of a view's scope; the rest defaults to an unrestricted `current` scope made at epoch 0. */
export type ViewFields = Pick<ResourceScope, "scopeId" | "owner" | "projectNames"> & Partial<Omit<ResourceScope, "resourceIds">>;

/**
 * A view over `resourceIds` (sorted, as the access interceptor builds it) for tests and benchmarks that
 * call a backend or a search function directly, without a server to resolve a scope.
 */
export function viewOver(resourceIds: readonly string[], fields: ViewFields): ScopedBackendView {
  return createScopedBackendView({
    temporalScope: "current",
    includeResources: [],
    excludeResources: [],
    includePaths: [],
    excludePaths: [],
    parentScopeId: "",
    expandDescendants: true,
    deniedResourceIds: [],
    createdAt: new Date(0),
    ...fields,
    resourceIds: [...resourceIds].sort(),
  });
}
