import { TEMPORAL_SCOPES, type ResourceScope, type TemporalScope } from "../../domain/scope.js";
import { MAX_SCOPE_PAGE, type ScopePage } from "../../ports/scope-store.js";

/**
 * One stored scope as every scope store keeps it: id, owner and creation time (ms) in columns, everything else
 * in a JSON body. One format, so the SQLite and PostgreSQL stores read each other's rows and a scope moves
 * between engines unchanged.
 */
export interface StoredScopeRow {
  scope_id: string;
  owner: string;
  body: string;
  /** Milliseconds; PostgreSQL's bigint arrives as a string. */
  created_at: number | string;
}

/** The JSON body: the temporal setting is re-validated on read, so it is kept as the string written. */
type ScopeBody = Omit<ResourceScope, "scopeId" | "owner" | "createdAt" | "temporalScope"> & { temporalScope: string };

function toTemporal(value: string): TemporalScope {
  return (TEMPORAL_SCOPES as readonly string[]).includes(value) ? (value as TemporalScope) : "current";
}

/** The size a stored scope counts for in its owner's usage: its body's UTF-8 bytes. */
export function storedScopeBytes(row: Pick<StoredScopeRow, "body">): number {
  return Buffer.byteLength(row.body, "utf8");
}

/** The row a store writes for `scope`. */
export function toStoredScopeRow(scope: ResourceScope): StoredScopeRow & { created_at: number } {
  const { scopeId, owner, createdAt, ...fields } = scope;
  const body: ScopeBody = fields;
  return { scope_id: scopeId, owner, body: JSON.stringify(body), created_at: createdAt.getTime() };
}

/** The scope a stored row holds, frozen (scopes are immutable and shared through caches). */
export function fromStoredScopeRow(row: StoredScopeRow): ResourceScope {
  const body = JSON.parse(row.body) as ScopeBody;
  return freezeScope({
    ...body,
    temporalScope: toTemporal(body.temporalScope),
    scopeId: row.scope_id,
    owner: row.owner,
    createdAt: new Date(Number(row.created_at)),
  });
}

/** A frozen copy of `scope`, its lists frozen too, so no holder of a cached scope can change it for others. */
export function freezeScope(scope: ResourceScope): ResourceScope {
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

/** A listing page's size: `limit` clamped to 1..MAX_SCOPE_PAGE. */
export function scopePageLimit(limit: number): number {
  return Math.min(Math.max(1, Math.trunc(limit)), MAX_SCOPE_PAGE);
}

/** A page from rows fetched one beyond `limit` (the extra row says whether another page follows). */
export function scopePageOf(rows: readonly StoredScopeRow[], limit: number): ScopePage {
  const scopes = rows.slice(0, limit).map(fromStoredScopeRow);
  return { scopes, next: rows.length > limit ? scopes[scopes.length - 1].scopeId : undefined };
}

/** How many bytes a store's cache of scopes may hold in all, by default (estimated from the stored bodies). */
export const DEFAULT_SCOPE_CACHE_BYTES = 128 * 1024 * 1024;

/** What a cached scope holds in memory, estimated from its stored body: UTF-16 strings, and per-entry overhead. */
function cachedScopeBytes(body: string): number {
  return 512 + 3 * body.length;
}

/**
 * The most recently used scopes of a store, by id. Scopes are immutable once saved, so a cached one is never
 * stale; only saved or found scopes enter it (unknown ids never do, so probing cannot grow it). Bounded by
 * entries and by estimated bytes: a scope may hold hundreds of KB of globs and names, so a count alone let
 * a tenant's large scopes fill the heap.
 */
export class ScopeCache {
  private readonly scopes = new Map<string, { scope: ResourceScope; bytes: number }>();
  private readonly size: number;
  private readonly maxBytes: number;
  private heldBytes = 0;

  constructor(size = 10_000, maxBytes = DEFAULT_SCOPE_CACHE_BYTES) {
    this.size = Math.max(1, size);
    this.maxBytes = Math.max(1, maxBytes);
  }

  /** The cached scope, now the most recently used; undefined when not cached. */
  get(scopeId: string): ResourceScope | undefined {
    const cached = this.scopes.get(scopeId);
    if (cached) {
      this.scopes.delete(scopeId);
      this.scopes.set(scopeId, cached);
    }
    return cached?.scope;
  }

  has(scopeId: string): boolean {
    return this.scopes.has(scopeId);
  }

  /** The estimated bytes held (for tests of the bound). */
  get bytes(): number {
    return this.heldBytes;
  }

  /** The scope from the cache, else from `read` (the store's row, remembered when found). */
  async readThrough(
    scopeId: string,
    read: () => StoredScopeRow | undefined | Promise<StoredScopeRow | undefined>,
  ): Promise<ResourceScope | undefined> {
    const cached = this.get(scopeId);
    if (cached) return cached;
    const row = await read();
    if (!row) return undefined;
    const scope = fromStoredScopeRow(row);
    this.remember(scope, row.body);
    return scope;
  }

  /** Keeps `scope` (whose stored body is `body`), dropping the least recently used past either bound. */
  remember(scope: ResourceScope, body: string): void {
    const bytes = cachedScopeBytes(body);
    if (bytes > this.maxBytes) return;
    const old = this.scopes.get(scope.scopeId);
    if (old) this.heldBytes -= old.bytes;
    this.scopes.delete(scope.scopeId);
    this.scopes.set(scope.scopeId, { scope, bytes });
    this.heldBytes += bytes;
    while (this.scopes.size > this.size || this.heldBytes > this.maxBytes) {
      const [oldest, entry] = this.scopes.entries().next().value as [string, { bytes: number }];
      this.scopes.delete(oldest);
      this.heldBytes -= entry.bytes;
    }
  }

  clear(): void {
    this.scopes.clear();
    this.heldBytes = 0;
  }
}
