import type { ResourceScope } from "../domain/scope.js";

/**
 * The scope store port: scopes are immutable once saved, so implementations may cache them freely.
 */
export interface ScopeStore {
  save(scope: ResourceScope): void;
  /** The scope, whoever owns it; callers check ownership (and answer NOT_FOUND for others). */
  get(scopeId: string): ResourceScope | undefined;
  close(): void;
}
