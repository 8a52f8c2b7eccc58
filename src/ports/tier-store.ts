import type { TierFragment } from "../domain/tier-fragment.js";

/** A fragment as loaded at start: the full record, with its content only when it is hot. */
export type LoadedFragment = Omit<TierFragment, "content"> & { content: string | undefined };

/**
 * The tier store port: where fragments are persisted, whichever tier they are in. The tier service
 * keeps placement and LRU order in memory (TierPolicy) and writes every change through this port, then
 * waits for `sync()` before it answers, so a restart loses no acknowledged fragment. A store several servers share is a SharedTierStore
 * (below): the service then brings its memory up to date from the store inside every operation.
 *
 * A fragment is identified by (`owner`, `id`): fragment ids are namespaced per principal, so the same id
 * under two owners names two unrelated fragments, and every method that names a fragment takes both.
 *
 * Implementations must make each `save` a crash-safe move: the fragment's new copy is durable before its
 * old copy (in another tier's storage) is removed, and `load` reconciles what a crash left half-done, so
 * after any crash a fragment is in exactly one tier. A store may make writes durable in groups (`sync`):
 * a removed copy is then deleted only once the write that replaced it is durable.
 */
export interface TierStore {
  /** Reconciles interrupted moves, then returns every fragment of every owner, in ascending access order. */
  load(): Promise<LoadedFragment[]>;
  /** The full original content of each of `owner`'s `ids` that exists (any tier), by id. */
  readContents(owner: string, ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * Writes `fragment` into `fragment.tier`, replacing any earlier copy in any tier: read back at once, and
   * durable once a `sync()` called after it has resolved.
   */
  save(fragment: TierFragment): Promise<void>;
  /** Deletes `owner`'s fragment `id` from whatever tier holds it (no-op when absent); durable as `save` is. */
  remove(owner: string, id: string): Promise<void>;
  /**
   * Makes every `save` and `remove` made so far durable: undefined when they already are (a store that
   * commits each write durably), else a promise resolved once they are. A store that syncs in groups shares
   * one sync among all the writes made while the previous sync ran, so concurrent writers pay one fsync.
   */
  sync(): Promise<void> | undefined;
  /**
   * Records a read of `owner`'s fragment `id` (LRU order). May be buffered: a crash may lose the order of
   * the latest reads, never a fragment. A recorded access never overrides a later save (the larger `seq` wins).
   */
  recordAccess(owner: string, id: string, lastAccessedAt: Date, seq: number): void;
  /** Writes buffered accesses and releases the store. */
  close(): Promise<void>;
}

/** What other servers committed to a shared tier store since this one last looked. */
export interface TierChanges {
  /** True when `saved` is every fragment (first look, or this server fell too far behind): forget what is held first. */
  full: boolean;
  /** Fragments written (stored, moved or read), hot ones with their content, in ascending access order. */
  saved: LoadedFragment[];
  /** Fragments deleted (apply before `saved`: a fragment deleted then stored again is in `saved`). */
  removed: { owner: string; id: string }[];
}

/**
 * A tier store several servers share (one database behind them all). Placement and LRU order are then
 * not one process's to keep: every tier operation runs through `coordinated`, which serialises it with
 * every other server's and first hands the service what they changed, so each server decides on the
 * deployment's current tiers and budgets hold across servers, not just within one.
 */
export interface SharedTierStore extends TierStore {
  /**
   * Runs `work` as one transaction holding the deployment-wide tier lock (exclusive when `write`; shared,
   * beside other readers, otherwise), after passing `apply` every change committed since this store last
   * looked. `save`, `remove`, `recordAccess` and `readContents` called during `work` join the transaction
   * (written at once, never buffered); it commits when `work` resolves and rolls back when it throws.
   * After a rollback that had written, the next call passes a full reload (`changes.full`).
   */
  coordinated<T>(write: boolean, apply: (changes: TierChanges) => void, work: () => Promise<T>): Promise<T>;
  /**
   * Adds `counts` (tier event counts by name, e.g. `hotHits: 1`) to counter pool `pool`, in the
   * transaction of the coordinated call it is made in: the counters GetMetrics reports are then the
   * deployment's, whichever server answers, not those of the one server a call happened to reach.
   */
  addCounts(pool: string, counts: Readonly<Record<string, number>>): Promise<void>;
  /** The counts of `pools` summed by name (absent names: never counted), as committed; within a coordinated call, in its transaction. */
  readCounts(pools: readonly string[]): Promise<Record<string, number>>;
}

/** Whether `store` is shared by several servers (and so must be used through `coordinated`). */
export function isSharedTierStore(store: TierStore): store is SharedTierStore {
  return typeof (store as Partial<SharedTierStore>).coordinated === "function";
}
