import type { ScopedBackendView } from "./scoped-backend-view.js";

/**
 * The view of the same scope without `hidden` resources (those being erased): what the backends are handed
 * while an erasure runs, so a stored scope that holds the resource finds none of it from the moment the
 * erasure began, before its rows are all gone. The view itself when it holds none of them (the usual case:
 * no allocation). The scope, its id and its projects stay: the call's refs are checked against the scope
 * as stored, so nothing is refused for it that was not refused before.
 */
export function viewWithout(view: ScopedBackendView, hidden: ReadonlySet<string>): ScopedBackendView {
  if (hidden.size === 0) return view;
  let any = false;
  for (const id of hidden) {
    if (view.resourceSet.has(id)) {
      any = true;
      break;
    }
  }
  if (!any) return view;
  const resourceIds = view.resourceIds.filter((id) => !hidden.has(id));
  const resourceSet = new Set(resourceIds);
  return {
    ...view,
    resourceIds,
    resourceSet,
    allows: (resourceId: string, path?: string) => resourceSet.has(resourceId) && view.allows(resourceId, path),
  };
}
