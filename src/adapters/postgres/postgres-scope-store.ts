import { AlreadyExistsError } from "../../domain/errors.js";
import type { ResourceScope } from "../../domain/scope.js";
import type { ScopePage, ScopeStore, ScopeUsage } from "../../ports/scope-store.js";
import {
  ScopeCache,
  freezeScope,
  scopePageLimit,
  scopePageOf,
  storedScopeBytes,
  toStoredScopeRow,
  type StoredScopeRow,
} from "../kit/scope-rows.js";
import { inTransaction, isUniqueViolation, type PostgresPool } from "./postgres-pool.js";

/** The first key of the advisory locks that order one owner's capped scope saves (the second is the owner's hash). */
const SCOPE_CAP_LOCK_CLASS = 0x5c09e;

/**
 * Scopes on PostgreSQL, in the embedded store's row format. Scopes are immutable once saved, so each server
 * caches the ones it has read or saved (the `cacheSize` most recently used; unknown ids are never cached, so
 * probing cannot grow it), and a scope saved through one server is read from the database by any other on
 * first use.
 */
export class PostgresScopeStore implements ScopeStore {
  private readonly cache: ScopeCache;

  constructor(
    private readonly pool: PostgresPool,
    opts: { cacheSize?: number } = {},
  ) {
    this.cache = new ScopeCache(opts.cacheSize);
  }

  async save(scope: ResourceScope, caps?: ScopeUsage): Promise<boolean> {
    const row = toStoredScopeRow(scope);
    const insert = "INSERT INTO scopes (scope_id, owner, body, created_at, body_bytes) VALUES ($1, $2, $3, $4, $5)";
    const values = [row.scope_id, row.owner, row.body, row.created_at, storedScopeBytes(row)];
    try {
      if (!caps) await this.pool.query(insert, values);
      else {
        // The owner's saves take turns (a transaction-scoped advisory lock on the owner, in the two-key space
        // no other lock of the service uses), so the check and the insert see the same count on every replica.
        const stored = await inTransaction(this.pool, async (client) => {
          await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [SCOPE_CAP_LOCK_CLASS, row.owner]);
          const { rows } = await client.query<{ scopes: string; bytes: string }>(
            "SELECT count(*) AS scopes, coalesce(sum(body_bytes), 0) AS bytes FROM scopes WHERE owner = $1",
            [row.owner],
          );
          if (Number(rows[0]?.scopes ?? 0) >= caps.scopes || Number(rows[0]?.bytes ?? 0) >= caps.bytes) return false;
          await client.query(insert, values);
          return true;
        });
        if (!stored) return false;
      }
    } catch (err) {
      if (isUniqueViolation(err)) throw new AlreadyExistsError(`scope ${scope.scopeId} already exists`);
      throw err;
    }
    this.cache.remember(freezeScope(scope), row.body);
    return true;
  }

  async get(scopeId: string): Promise<ResourceScope | undefined> {
    return this.cache.readThrough(scopeId, async () => {
      const { rows } = await this.pool.query<StoredScopeRow>("SELECT scope_id, owner, body, created_at FROM scopes WHERE scope_id = $1", [
        scopeId,
      ]);
      return rows[0];
    });
  }

  async listByOwner(owner: string, page: { limit: number; before?: string }): Promise<ScopePage> {
    const limit = scopePageLimit(page.limit);
    const { rows } =
      page.before === undefined
        ? await this.pool.query<StoredScopeRow>(
            "SELECT scope_id, owner, body, created_at FROM scopes WHERE owner = $1 ORDER BY scope_id DESC LIMIT $2",
            [owner, limit + 1],
          )
        : await this.pool.query<StoredScopeRow>(
            "SELECT scope_id, owner, body, created_at FROM scopes WHERE owner = $1 AND scope_id < $2 ORDER BY scope_id DESC LIMIT $3",
            [owner, page.before, limit + 1],
          );
    return scopePageOf(rows, limit);
  }

  async usageOf(owner: string): Promise<ScopeUsage> {
    const { rows } = await this.pool.query<{ scopes: string; bytes: string }>(
      "SELECT count(*) AS scopes, coalesce(sum(body_bytes), 0) AS bytes FROM scopes WHERE owner = $1",
      [owner],
    );
    return { scopes: Number(rows[0]?.scopes ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
  }

  /** Whether `scopeId` is held in this server's memory (for tests of the cache). */
  isCached(scopeId: string): boolean {
    return this.cache.has(scopeId);
  }

  async close(): Promise<void> {
    this.cache.clear();
  }
}
