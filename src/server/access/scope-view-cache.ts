import type { ResourceScope } from "../../domain/scope.js";
import { BYTES_PER_GLOB_STATE } from "../../domain/scope-glob-budget.js";
import { createScopedBackendView, type ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { ScopeStore } from "../../ports/scope-store.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import { reachableResources } from "../../application/scopes/reachable-resources.js";

/** How many scopes' views are kept at most (the most recently used ones). */
export const DEFAULT_SCOPE_VIEW_CACHE_SIZE = 10_000;

/** How many bytes the cached views may hold in all (estimated by {@link scopeViewBytes}). */
export const DEFAULT_SCOPE_VIEW_CACHE_BYTES = 256 * 1024 * 1024;

/** Per resource id: the id in the scope's list and in the view's set (a 26-character string, a Set entry). */
const BYTES_PER_RESOURCE_ID = 160;

/**
 * What a view holds in memory, estimated from above: its compiled path filter (by automaton states), its
 * resource set, and the scope's strings. A count of entries said nothing of this: one view with the most
 * globs a scope may hold is tens of MB, and 10,000 of them ran the heap out.
 */
export function scopeViewBytes(view: ScopedBackendView): number {
  const s = view.scope;
  const strings = [...s.projectNames, ...s.includeResources, ...s.excludeResources, ...s.includePaths, ...s.excludePaths];
  const chars = strings.reduce((n, x) => n + x.length + 16, 0);
  const ids = s.resourceIds.length + s.deniedResourceIds.length;
  return 1024 + view.paths.states * BYTES_PER_GLOB_STATE + ids * BYTES_PER_RESOURCE_ID + 2 * chars;
}

/**
 * The views of recently used scopes, by scope id, over the scope store. Scopes are immutable, so a view
 * built once (its resource set and compiled path filter) is valid for good, and the per-call look-up of a
 * cached scope is one synchronous map read, with no await on the (asynchronous, maybe networked) store.
 * Bounded by entries and by estimated bytes (least recently used out first; a view larger than the whole
 * budget is built for its call but not kept); only scopes the store answered are cached, so probing with
 * unknown ids cannot grow it.
 */
export class ScopeViewCache {
  private readonly views = new Map<string, { view: ScopedBackendView; bytes: number }>();
  private readonly size: number;
  private readonly maxBytes: number;
  private heldBytes = 0;
  /** The registry whose current links views are built from; absent: views hold the stored resource set as is. */
  private readonly registry: RegistryStore | undefined;
  /** The registry's `linkRemovals()` the cached views were built under. */
  private builtUnder = 0;

  constructor(
    private readonly scopes: ScopeStore,
    opts: { size?: number; maxBytes?: number; registry?: RegistryStore } = {},
  ) {
    this.size = Math.max(1, opts.size ?? DEFAULT_SCOPE_VIEW_CACHE_SIZE);
    this.maxBytes = Math.max(1, opts.maxBytes ?? DEFAULT_SCOPE_VIEW_CACHE_BYTES);
    this.registry = opts.registry;
    this.builtUnder = this.registry?.linkRemovals() ?? 0;
  }

  /**
   * Forgets every cached view once the registry removed a link since they were built: a view holds the
   * resources its scope reached through the links of that time (one integer compare per call otherwise).
   */
  private dropStale(): void {
    const removals = this.registry?.linkRemovals() ?? 0;
    if (removals === this.builtUnder) return;
    this.views.clear();
    this.heldBytes = 0;
    this.builtUnder = removals;
  }

  /** The estimated bytes of the views held (for tests of the bound). */
  get bytes(): number {
    return this.heldBytes;
  }

  /** How many views are held. */
  get entries(): number {
    return this.views.size;
  }

  /** The cached view of `scopeId`, without touching the store; undefined when it is not cached. */
  peek(scopeId: string): ScopedBackendView | undefined {
    this.dropStale();
    const entry = this.views.get(scopeId);
    if (entry) {
      this.views.delete(scopeId);
      this.views.set(scopeId, entry);
    }
    return entry?.view;
  }

  /** The stored scope of `scopeId` (not cached here until `viewOf` is asked for it). */
  read(scopeId: string): Promise<ResourceScope | undefined> {
    return this.scopes.get(scopeId);
  }

  /**
   * The view of `scope` over the resources it still reaches through the registry's current links, built and
   * cached; throws (caching nothing) for a scope its deny list emptied. A view built while a link was
   * removed is answered but not kept (it may hold the removed link's resources).
   */
  async viewOf(scope: ResourceScope): Promise<ScopedBackendView> {
    this.dropStale();
    const cached = this.views.get(scope.scopeId);
    if (cached) return cached.view;
    const removals = this.builtUnder;
    const view = createScopedBackendView(scope, this.registry ? await reachableResources(this.registry, scope) : scope.resourceIds);
    const bytes = scopeViewBytes(view);
    this.dropStale();
    if (bytes > this.maxBytes || removals !== this.builtUnder) return view;
    const raced = this.views.get(scope.scopeId);
    if (raced) return raced.view;
    this.views.set(scope.scopeId, { view, bytes });
    this.heldBytes += bytes;
    while (this.views.size > this.size || this.heldBytes > this.maxBytes) {
      const [oldest, entry] = this.views.entries().next().value as [string, { bytes: number }];
      this.views.delete(oldest);
      this.heldBytes -= entry.bytes;
    }
    return view;
  }
}
