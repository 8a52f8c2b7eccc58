import type { ResourceScope } from "../domain/scope.js";

/**
 * The scope store port: scopes are immutable once saved, so implementations (and callers) may cache them
 * freely; a cached scope is never stale.
 *
 * Asynchronous, so a networked engine can implement it. Guarantees every implementation gives:
 * - `save` is one transaction: the scope is stored whole or not at all, and a second save of the same
 *   id is AlreadyExists (never an overwrite).
 * - Once `save` resolved, every `get` of that id (on any replica over the same engine) answers the scope.
 * - `get` answers a scope exactly as saved, or undefined; never a partial one.
 */
export interface ScopeStore {
  save(scope: ResourceScope): Promise<void>;
  /** The scope, whoever owns it; callers check ownership (and answer NOT_FOUND for others). */
  get(scopeId: string): Promise<ResourceScope | undefined>;
  /** Releases the store; no call may follow. */
  close(): Promise<void>;
}
