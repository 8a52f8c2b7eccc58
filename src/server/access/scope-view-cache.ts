import type { ResourceScope } from "../../domain/scope.js";
import { createScopedBackendView, type ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { ScopeStore } from "../../ports/scope-store.js";

/** How many scopes' views are kept (the most recently used ones). */
export const DEFAULT_SCOPE_VIEW_CACHE_SIZE = 10_000;

/**
 * The views of recently used scopes, by scope id, over the scope store. Scopes are immutable, so a view
 * built once (its resource set and compiled path filter) is valid for good, and the per-call look-up of a
 * cached scope is one synchronous map read, with no await on the (asynchronous, maybe networked) store.
 * Bounded (least recently used out first); only scopes the store answered are cached, so probing with
 * unknown ids cannot grow it.
 */
export class ScopeViewCache {
  private readonly views = new Map<string, ScopedBackendView>();
  private readonly size: number;

  constructor(
    private readonly scopes: ScopeStore,
    opts: { size?: number } = {},
  ) {
    this.size = Math.max(1, opts.size ?? DEFAULT_SCOPE_VIEW_CACHE_SIZE);
  }

  /** The cached view of `scopeId`, without touching the store; undefined when it is not cached. */
  peek(scopeId: string): ScopedBackendView | undefined {
    const view = this.views.get(scopeId);
    if (view) {
      this.views.delete(scopeId);
      this.views.set(scopeId, view);
    }
    return view;
  }

  /** The stored scope of `scopeId` (not cached here until `viewOf` is asked for it). */
  read(scopeId: string): Promise<ResourceScope | undefined> {
    return this.scopes.get(scopeId);
  }

  /** The view of `scope`, built and cached; throws (caching nothing) for a scope its deny list emptied. */
  viewOf(scope: ResourceScope): ScopedBackendView {
    const cached = this.views.get(scope.scopeId);
    if (cached) return cached;
    const view = createScopedBackendView(scope);
    this.views.set(scope.scopeId, view);
    if (this.views.size > this.size) {
      const oldest = this.views.keys().next().value;
      if (oldest !== undefined) this.views.delete(oldest);
    }
    return view;
  }
}
