import { AlreadyExistsError } from "../../domain/errors.js";
import { TEMPORAL_SCOPES, type ResourceScope, type TemporalScope } from "../../domain/scope.js";
import { MAX_SCOPE_PAGE, type ScopePage, type ScopeStore } from "../../ports/scope-store.js";
import { isUniqueViolation, type PostgresPool } from "./postgres-pool.js";

/** The JSON body of a stored scope (the embedded store's format): everything but the columns. */
type ScopeBody = Omit<ResourceScope, "scopeId" | "owner" | "createdAt" | "temporalScope"> & { temporalScope: string };

function toTemporal(value: string): TemporalScope {
  return (TEMPORAL_SCOPES as readonly string[]).includes(value) ? (value as TemporalScope) : "current";
}

type ScopeRow = { scope_id: string; owner: string; body: string; created_at: number };

function fromRow(row: ScopeRow): ResourceScope {
  const body = JSON.parse(row.body) as ScopeBody;
  return freeze({
    ...body,
    temporalScope: toTemporal(body.temporalScope),
    scopeId: row.scope_id,
    owner: row.owner,
    createdAt: new Date(Number(row.created_at)),
  });
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
 * Scopes on PostgreSQL. Scopes are immutable once saved, so each server caches the ones it has read or
 * saved (the `cacheSize` most recently used; unknown ids are never cached, so probing cannot grow it),
 * and a scope saved through one server is read from the database by any other on first use.
 */
export class PostgresScopeStore implements ScopeStore {
  private readonly cache = new Map<string, ResourceScope>();
  private readonly cacheSize: number;

  constructor(private readonly pool: PostgresPool, opts: { cacheSize?: number } = {}) {
    this.cacheSize = Math.max(1, opts.cacheSize ?? 10_000);
  }

  async save(scope: ResourceScope): Promise<void> {
    const { scopeId, owner, createdAt, ...fields } = scope;
    const body: ScopeBody = fields;
    try {
      await this.pool.query("INSERT INTO scopes (scope_id, owner, body, created_at) VALUES ($1, $2, $3, $4)", [
        scopeId,
        owner,
        JSON.stringify(body),
        createdAt.getTime(),
      ]);
    } catch (err) {
      if (isUniqueViolation(err)) throw new AlreadyExistsError(`scope ${scopeId} already exists`);
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
    const { rows } = await this.pool.query<ScopeRow>("SELECT scope_id, owner, body, created_at FROM scopes WHERE scope_id = $1", [scopeId]);
    const row = rows[0];
    if (!row) return undefined;
    const scope = fromRow(row);
    this.remember(scope);
    return scope;
  }

  async listByOwner(owner: string, page: { limit: number; before?: string }): Promise<ScopePage> {
    const limit = Math.min(Math.max(1, Math.trunc(page.limit)), MAX_SCOPE_PAGE);
    // One row more than asked says whether another page follows.
    const { rows } =
      page.before === undefined
        ? await this.pool.query<ScopeRow>("SELECT scope_id, owner, body, created_at FROM scopes WHERE owner = $1 ORDER BY scope_id DESC LIMIT $2", [owner, limit + 1])
        : await this.pool.query<ScopeRow>("SELECT scope_id, owner, body, created_at FROM scopes WHERE owner = $1 AND scope_id < $2 ORDER BY scope_id DESC LIMIT $3", [owner, page.before, limit + 1]);
    const scopes = rows.slice(0, limit).map(fromRow);
    return { scopes, next: rows.length > limit ? scopes[scopes.length - 1].scopeId : undefined };
  }

  /** Whether `scopeId` is held in this server's memory (for tests of the cache). */
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
