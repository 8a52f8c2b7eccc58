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
import { isSqliteUniqueViolation, type SqliteDatabase } from "../kit/sqlite-database.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS scopes (
  scope_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  body_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS scopes_by_owner ON scopes (owner, scope_id);
`;

/** Each owner's count and bytes from the index alone (a covering index: bodies are never read to sum them). */
const USAGE_INDEX = "CREATE INDEX IF NOT EXISTS scopes_usage ON scopes (owner, body_bytes)";

/** A database written before body_bytes existed gets the column, filled once from the stored bodies. */
function addBodyBytes(db: SqliteDatabase): void {
  const columns = db.prepare<[], { name: string }>("PRAGMA table_info(scopes)").all();
  if (columns.some((c) => c.name === "body_bytes")) return;
  db.exec(
    "ALTER TABLE scopes ADD COLUMN body_bytes INTEGER NOT NULL DEFAULT 0; UPDATE scopes SET body_bytes = length(CAST(body AS BLOB));",
  );
}

/**
 * Scopes on the embedded SQLite database. Scopes are immutable once saved, so each is cached in memory
 * after its first read (or its save) and every later call of a plan skips the database. The cache keeps
 * the `cacheSize` most recently used scopes; unknown ids are never cached, so probing cannot grow it.
 */
export class SqliteScopeStore implements ScopeStore {
  private readonly cache: ScopeCache;
  private readonly insert;
  private readonly select;
  private readonly newestOf;
  private readonly olderOf;
  private readonly usage;

  constructor(
    private readonly db: SqliteDatabase,
    opts: { cacheSize?: number } = {},
  ) {
    this.cache = new ScopeCache(opts.cacheSize);
    db.exec(SCHEMA);
    addBodyBytes(db);
    db.exec(USAGE_INDEX);
    this.insert = db.prepare<[string, string, string, number, number]>(
      "INSERT INTO scopes (scope_id, owner, body, created_at, body_bytes) VALUES (?, ?, ?, ?, ?)",
    );
    this.usage = db.prepare<[string], { scopes: number; bytes: number }>(
      "SELECT count(*) AS scopes, coalesce(sum(body_bytes), 0) AS bytes FROM scopes WHERE owner = ?",
    );
    this.select = db.prepare<[string], StoredScopeRow>("SELECT scope_id, owner, body, created_at FROM scopes WHERE scope_id = ?");
    this.newestOf = db.prepare<[string, number], StoredScopeRow>(
      "SELECT scope_id, owner, body, created_at FROM scopes WHERE owner = ? ORDER BY scope_id DESC LIMIT ?",
    );
    this.olderOf = db.prepare<[string, string, number], StoredScopeRow>(
      "SELECT scope_id, owner, body, created_at FROM scopes WHERE owner = ? AND scope_id < ? ORDER BY scope_id DESC LIMIT ?",
    );
  }

  async save(scope: ResourceScope, caps?: ScopeUsage): Promise<boolean> {
    const row = toStoredScopeRow(scope);
    // One synchronous transaction: the caps check and the insert see the same state (one writer per database).
    const stored = this.db.transaction(() => {
      if (caps) {
        const usage = this.usage.get(row.owner);
        if (usage && (Number(usage.scopes) >= caps.scopes || Number(usage.bytes) >= caps.bytes)) return false;
      }
      this.insert.run(row.scope_id, row.owner, row.body, row.created_at, storedScopeBytes(row));
      return true;
    });
    try {
      if (!stored.immediate()) return false;
    } catch (err) {
      if (isSqliteUniqueViolation(err)) throw new AlreadyExistsError(`scope ${scope.scopeId} already exists`);
      throw err;
    }
    this.cache.remember(freezeScope(scope), row.body);
    return true;
  }

  async get(scopeId: string): Promise<ResourceScope | undefined> {
    return this.cache.readThrough(scopeId, () => this.select.get(scopeId));
  }

  async listByOwner(owner: string, page: { limit: number; before?: string }): Promise<ScopePage> {
    const limit = scopePageLimit(page.limit);
    const rows = page.before === undefined ? this.newestOf.all(owner, limit + 1) : this.olderOf.all(owner, page.before, limit + 1);
    return scopePageOf(rows, limit);
  }

  async usageOf(owner: string): Promise<ScopeUsage> {
    const { scopes, bytes } = this.usage.get(owner) ?? { scopes: 0, bytes: 0 };
    return { scopes: Number(scopes), bytes: Number(bytes) };
  }

  /** Whether `scopeId` is held in memory (for tests of the cache). */
  isCached(scopeId: string): boolean {
    return this.cache.has(scopeId);
  }

  async close(): Promise<void> {
    this.cache.clear();
  }
}
