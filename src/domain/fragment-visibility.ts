import { preventedLeaks, type LeakCounter } from "./leak-guard.js";
import type { ScopedBackendView } from "./scoped-backend-view.js";

/** What decides whether a fragment is visible: its principal, its project and the resource it is about. */
export interface FragmentOwner {
  /** The principal whose namespace holds the fragment. */
  owner: string;
  id: string;
  projectName: string;
  resourceId: string;
}

/**
 * Whether a call in `view` may see a fragment: it belongs to the call's principal (fragment ids are
 * namespaced per principal, and a scope is owned by one principal), its project is one of the scope's, and
 * its resource (when it names one) is in the scope's effective resource set. A fragment with no owner or no
 * project is never visible.
 */
export function isFragmentVisible(view: ScopedBackendView, f: FragmentOwner): boolean {
  if (f.owner.length === 0 || f.owner !== view.principal) return false;
  if (f.projectName.length === 0 || !view.projectSet.has(f.projectName)) return false;
  return f.resourceId.length === 0 || view.resourceSet.has(f.resourceId);
}

/**
 * The last check on the way out of every tier read path, as guardResults is for search: drops (and counts
 * as a prevented leak) any fragment the view does not allow. Fragments may have no resource, which
 * guardResults would refuse, hence this variant with the fragment's own visibility rule.
 */
export function guardFragments<T extends FragmentOwner>(
  view: ScopedBackendView,
  fragments: readonly T[],
  source: string,
  counter: LeakCounter = preventedLeaks,
): T[] {
  const kept: T[] = [];
  for (const f of fragments) {
    if (isFragmentVisible(view, f)) kept.push(f);
    else {
      counter.prevented += 1;
      process.stderr.write(
        `acms: prevented leak: ${source} returned fragment ${f.id} of ${f.projectName || "(no project)"} outside scope ${view.scopeId}\n`,
      );
    }
  }
  return kept;
}
