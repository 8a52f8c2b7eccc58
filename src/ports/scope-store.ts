import type { ResourceScope } from "../domain/scope.js";

/** How many scopes one {@link ScopeStore.listByOwner} page may hold at most. */
export const MAX_SCOPE_PAGE = 100;

/** One page of a principal's scopes, and where the next one starts (undefined: this was the last). */
export interface ScopePage {
  scopes: ResourceScope[];
  /** Pass as `before` to get the next page. */
  next?: string;
}

/** What one owner's stored scopes take: how many, and the bytes of their stored bodies (UTF-8). */
export interface ScopeUsage {
  scopes: number;
  bytes: number;
}

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
  /**
   * Stores `scope`. With `caps`, only while its owner holds fewer scopes than `caps.scopes` and fewer bytes
   * than `caps.bytes`, checked and stored atomically (concurrent saves of one owner, on any replica, never
   * take it past the caps): false when refused, nothing stored.
   */
  save(scope: ResourceScope, caps?: ScopeUsage): Promise<boolean>;
  /** The scope, whoever owns it; callers check ownership (and answer NOT_FOUND for others). */
  get(scopeId: string): Promise<ResourceScope | undefined>;
  /**
   * The scopes `owner` made, by scope id descending (ULIDs, so newest first), at most `limit` (1 to
   * MAX_SCOPE_PAGE) of them with an id below `before` when given. Never another owner's: this is what lets
   * an operator see the stored scopes of a key without any RPC that names scope ids.
   */
  listByOwner(owner: string, page: { limit: number; before?: string }): Promise<ScopePage>;
  /**
   * How many scopes `owner` has stored and their size (each scope's stored body in UTF-8 bytes, as
   * `storedScopeBytes` counts it), on every replica alike: what per-principal caps are checked against.
   * Answered from an index, without reading the bodies.
   */
  usageOf(owner: string): Promise<ScopeUsage>;
  /** Releases the store; no call may follow. */
  close(): Promise<void>;
}
