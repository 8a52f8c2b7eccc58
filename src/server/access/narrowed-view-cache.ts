import { BYTES_PER_GLOB_STATE } from "../../domain/scope-glob-budget.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { viewNarrowedToPaths } from "../../domain/view-narrowed-to-paths.js";

/** How many narrowed views are kept at most. */
const MAX_ENTRIES = 256;

/** How many bytes the narrowed views' compiled globs may hold in all (a view over the budget is built, not kept). */
const MAX_BYTES = 32 * 1024 * 1024;

/**
 * Views narrowed by extra include globs (`narrowingIncludePathsKey`), kept per (scope view, globs) so a repeated
 * MCP `search` with the same `include_paths` compiles its globs once and hands the backends the same view
 * object (backends keep per-view layouts). Bounded by entries and by the compiled globs' estimated bytes,
 * least recently used out first; an entry is only reused for the very view it was built from, so a scope view
 * the cache above rebuilt (links removed) is narrowed afresh.
 */
export class NarrowedViewCache {
  private readonly views = new Map<string, { base: ScopedBackendView; view: ScopedBackendView; bytes: number }>();
  private heldBytes = 0;

  /** `base` narrowed to `includePaths` (INVALID_ARGUMENT naming `field[i]` for a bad glob or one past the budget). */
  narrow(base: ScopedBackendView, includePaths: readonly string[], field: string): ScopedBackendView {
    if (includePaths.length === 0) return base;
    const key = `${base.scopeId}\0${includePaths.join("\0")}`;
    const held = this.views.get(key);
    if (held && held.base === base) {
      this.views.delete(key);
      this.views.set(key, held);
      return held.view;
    }
    const view = viewNarrowedToPaths(base, includePaths, field);
    const bytes = 512 + (view.paths.states - base.paths.states) * BYTES_PER_GLOB_STATE + 2 * key.length;
    if (held) {
      this.views.delete(key);
      this.heldBytes -= held.bytes;
    }
    if (bytes > MAX_BYTES) return view;
    this.views.set(key, { base, view, bytes });
    this.heldBytes += bytes;
    while (this.views.size > MAX_ENTRIES || this.heldBytes > MAX_BYTES) {
      const [oldest, entry] = this.views.entries().next().value as [string, { bytes: number }];
      this.views.delete(oldest);
      this.heldBytes -= entry.bytes;
    }
    return view;
  }
}
