import { AlreadyExistsError } from "../../domain/errors.js";
import { TEMPORAL_SCOPES, type ResourceScope, type TemporalScope } from "../../domain/scope.js";
import { MAX_SCOPE_PAGE, type ScopePage, type ScopeStore } from "../../ports/scope-store.js";
import type { SqliteDatabase } from "./sqlite-database.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS scopes (
  scope_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS scopes_by_owner ON scopes (owner, scope_id);
`;

type ScopeRow = { scope_id: string; owner: string; body: string; created_at: number };

function fromRow(row: ScopeRow): ResourceScope {
  const body = JSON.parse(row.body) as ScopeBody;
  return freeze({
    ...body,
    temporalScope: toTemporal(body.temporalScope),
    scopeId: row.scope_id,
    owner: row.owner,
    createdAt: new Date(row.created_at),
  });
}

/**
 * The JSON body of a stored scope: everything but id, owner and creation time, which have columns. The
 * temporal setting is re-validated on read, so it is kept as the string that was written.
 */
type ScopeBody = Omit<ResourceScope, "scopeId" | "owner" | "createdAt" | "temporalScope"> & { temporalScope: string };

function toTemporal(value: string): TemporalScope {
  return (TEMPORAL_SCOPES as readonly string[]).includes(value) ? (value as TemporalScope) : "current";
}

function freeze(scope: ResourceScope): ResourceScope {
  return Object.freeze({
    ...scope,
    resourceIds: Object.freeze([...scope.resourceIds]),
    projectNames: Object.freeze([...scope.projectNames]),
    includeResources: Object.freeze([...scope.includeResources]),
    excludeResources: Object.freeze([...scope.excludeResources]),
    includePaths: Object.freeze([...scope.includePaths]),
    excludePaths: Object.freeze([...scope.excludePaths]),
    deniedResourceIds: Object.freeze([...scope.deniedResourceIds]),
  });
}

/**
 * Scopes on the embedded SQLite database. Scopes are immutable once saved, so each is cached in memory
 * after its first read (or its save) and every later call of a plan skips the database. The cache keeps
 * the `cacheSize` most recently used scopes; unknown ids are never cached, so probing cannot grow it.
 */
export class SqliteScopeStore implements ScopeStore {
  private readonly cache = new Map<string, ResourceScope>();
  private readonly cacheSize: number;
  private readonly insert;
  private readonly select;
  private readonly newestOf;
  private readonly olderOf;

  constructor(db: SqliteDatabase, opts: { cacheSize?: number } = {}) {
    this.cacheSize = Math.max(1, opts.cacheSize ?? 10_000);
    db.exec(SCHEMA);
    this.insert = db.prepare<[string, string, string, number]>("INSERT INTO scopes (scope_id, owner, body, created_at) VALUES (?, ?, ?, ?)");
    this.select = db.prepare<[string], ScopeRow>("SELECT scope_id, owner, body, created_at FROM scopes WHERE scope_id = ?");
    this.newestOf = db.prepare<[string, number], ScopeRow>(
      "SELECT scope_id, owner, body, created_at FROM scopes WHERE owner = ? ORDER BY scope_id DESC LIMIT ?",
    );
    this.olderOf = db.prepare<[string, string, number], ScopeRow>(
      "SELECT scope_id, owner, body, created_at FROM scopes WHERE owner = ? AND scope_id < ? ORDER BY scope_id DESC LIMIT ?",
    );
  }

  async save(scope: ResourceScope): Promise<void> {
    const { scopeId, owner, createdAt, ...fields } = scope;
    const body: ScopeBody = fields;
    try {
      this.insert.run(scopeId, owner, JSON.stringify(body), createdAt.getTime());
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE") {
        throw new AlreadyExistsError(`scope ${scopeId} already exists`);
      }
      throw err;
    }
    this.remember(freeze(scope));
  }

  async get(scopeId: string): Promise<ResourceScope | undefined> {
    const cached = this.cache.get(scopeId);
    if (cached) {
      this.cache.delete(scopeId);
      this.cache.set(scopeId, cached);
      return cached;
    }
    const row = this.select.get(scopeId);
    if (!row) return undefined;
    const scope = fromRow(row);
    this.remember(scope);
    return scope;
  }

  async listByOwner(owner: string, page: { limit: number; before?: string }): Promise<ScopePage> {
    const limit = Math.min(Math.max(1, Math.trunc(page.limit)), MAX_SCOPE_PAGE);
    // One row more than asked says whether another page follows.
    const rows = page.before === undefined ? this.newestOf.all(owner, limit + 1) : this.olderOf.all(owner, page.before, limit + 1);
    const scopes = rows.slice(0, limit).map(fromRow);
    return { scopes, next: rows.length > limit ? scopes[scopes.length - 1].scopeId : undefined };
  }

  /** Whether `scopeId` is held in memory (for tests of the cache). */
  isCached(scopeId: string): boolean {
    return this.cache.has(scopeId);
  }

  private remember(scope: ResourceScope): void {
    this.cache.set(scope.scopeId, scope);
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }

  async close(): Promise<void> {
    this.cache.clear();
  }
}
