import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import pg from "pg";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { VectorBackend, VectorEntry, VectorHit, VectorSearchOptions } from "../../ports/vector-backend.js";
import { GENERATION_CHANNEL } from "./postgres-document-store.js";
import type { PostgresPool } from "./postgres-pool.js";
import { DEFAULT_FOLLOWER_HORIZON_MS, forgetFollower, pruneVectorChanges, recordFollower } from "./vector-change-log.js";
import { vectorFromBytes } from "../kit/vectors/vector-bytes.js";

/** The in-process vector index this follower keeps current (the embedded PartitionedVectorBackend). */
export interface FollowedVectorIndex extends VectorBackend {
  replaceAll(entries: Iterable<VectorEntry>): void;
}

/** Options of a follower (the defaults suit a server). */
export interface VectorFollowerOptions {
  /**
   * Listen for commits' notifications (default true). Off, the follower learns of other servers' writes
   * by polling and by the check before every search only: for a connection pooler that cannot LISTEN
   * (transaction pooling), or to hold a follower behind on purpose.
   */
  notifications?: boolean;
  /** How often it checks the generation and tells the database what it has applied, in ms (default 2000). */
  pollMs?: number;
  /** How often it prunes the change log of what every server has applied, in ms (default 60,000). */
  pruneEveryMs?: number;
  /** How long a server may go unseen before the log stops being kept for it (vector-change-log.ts). */
  horizonMs?: number;
}

interface ChangeRow {
  generation: string;
  resource_reloaded: string | null;
  added: number[];
  superseded: number[];
  removed: number[];
  at: number;
}

interface EntryRow {
  chunk_key: number;
  resource_id: string;
  path: string;
  superseded_at: number | null;
  embedding: Buffer;
}

/**
 * Vectors held in process for a database without the `vector` extension, kept current across every
 * server that shares the database. At start the index is loaded from the chunk rows; afterwards it
 * replays the `vector_changes` log (one row per committed write that changed vectors), from the
 * generation it holds, whenever a commit's NOTIFY on `acms_index_generation` arrives, every 2 s as a
 * fallback, and before every search when the database's generation is ahead of it. So a search answers
 * at least the generation that was committed when it started (read-your-writes across servers), and a
 * write through another server reaches this one's index within one notification round trip.
 *
 * The log is pruned of what every server has applied: each follower records its generation in
 * `vector_followers` at every poll and prunes now and then (vector-change-log.ts); a server unseen past
 * the horizon is no longer waited for and, if it comes back, finds the log pruned past its generation
 * and reloads every vector instead of replaying.
 *
 * Replays are idempotent: an added chunk is read back from its row as it is now (gone rows are skipped),
 * supersessions and removals can be applied twice. Writes made through this server are also applied
 * directly by its Indexer (the VectorBackend write methods pass through), then replayed harmlessly.
 */
export class PostgresVectorFollower implements VectorBackend {
  private applied = 0n;
  private catching: Promise<void> | undefined;
  private listener: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private reloads = 0;
  private lastPrune = 0;
  /** This server's row in `vector_followers`. */
  private readonly serverId = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;

  private constructor(
    private readonly pool: PostgresPool,
    private readonly index: FollowedVectorIndex,
    private readonly url: string,
    private readonly opts: VectorFollowerOptions,
  ) {}

  get dimension(): number {
    return this.index.dimension;
  }

  /** The generation whose vector changes this server's index reflects. */
  get appliedGeneration(): bigint {
    return this.applied;
  }

  /** Full reloads of the index since open (the first load not counted): one per fall behind the pruned log. */
  get fullReloads(): number {
    return this.reloads;
  }

  /** Loads every retained vector into `index`, then follows the database's changes. */
  static async open(
    pool: PostgresPool,
    url: string,
    index: FollowedVectorIndex,
    opts: VectorFollowerOptions = {},
  ): Promise<PostgresVectorFollower> {
    const f = new PostgresVectorFollower(pool, index, url, opts);
    if (opts.notifications ?? true) await f.listen();
    await f.reloadAll();
    await recordFollower(pool, f.serverId, f.applied);
    f.lastPrune = Date.now();
    f.timer = setInterval(() => void f.tick().catch(() => undefined), opts.pollMs ?? 2000);
    f.timer.unref();
    return f;
  }

  /**
   * One poll: catches up, tells the database what this server has applied, and now and then prunes the
   * change log of the rows every server has applied (any server may prune; running it twice is harmless).
   */
  async tick(): Promise<void> {
    await this.catchUp();
    if (this.closed) return;
    await recordFollower(this.pool, this.serverId, this.applied);
    if (Date.now() - this.lastPrune >= (this.opts.pruneEveryMs ?? 60_000)) {
      this.lastPrune = Date.now();
      await pruneVectorChanges(this.pool, this.opts.horizonMs ?? DEFAULT_FOLLOWER_HORIZON_MS);
    }
  }

  upsert(entries: readonly VectorEntry[]): void {
    this.index.upsert(entries);
  }

  supersede(chunkKeys: readonly number[], at: number): void {
    this.index.supersede(chunkKeys, at);
  }

  remove(chunkKeys: readonly number[]): void {
    this.index.remove(chunkKeys);
  }

  clearResource(resourceId: string): void {
    this.index.clearResource(resourceId);
  }

  replaceResource(resourceId: string, entries: readonly VectorEntry[]): Promise<void> {
    return this.index.replaceResource(resourceId, entries);
  }

  /** Erases the resource from this server's copy (the other servers drop its rows as the change log's removals reach them). */
  async eraseResource(resourceId: string): Promise<void> {
    if (this.index.eraseResource) await this.index.eraseResource(resourceId);
    else this.index.clearResource(resourceId);
  }

  async search(
    view: ScopedBackendView,
    query: Float32Array,
    opts: VectorSearchOptions,
  ): Promise<{ hits: VectorHit[]; exhaustive: boolean }> {
    await this.catchUp();
    return this.index.search(view, query, opts);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.catching?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
    await forgetFollower(this.pool, this.serverId).catch(() => undefined);
    await this.index.close();
  }

  /** Brings the index up to the database's current generation (one replay at a time; callers share it). */
  async catchUp(): Promise<void> {
    if (this.closed) return;
    const { rows } = await this.pool.query<{ g: string }>("SELECT generation::text AS g FROM index_state WHERE id = 1");
    const target = BigInt(rows[0].g);
    while (this.applied < target && !this.closed) {
      this.catching ??= this.replay().finally(() => (this.catching = undefined));
      await this.catching;
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: "acms-listen" });
    client.on("error", () => {
      // The poll keeps the index current until the next start; a lost listener is not fatal.
      this.listener = undefined;
    });
    client.on("notification", (n) => {
      if (n.channel === GENERATION_CHANNEL && n.payload !== undefined && BigInt(n.payload) > this.applied)
        void this.catchUp().catch(() => undefined);
    });
    await client.connect();
    await client.query(`LISTEN ${GENERATION_CHANNEL}`);
    this.listener = client;
  }

  private async reloadAll(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const g = BigInt((await client.query<{ g: string }>("SELECT generation::text AS g FROM index_state WHERE id = 1")).rows[0].g);
      const { rows } = await client.query<EntryRow>(
        "SELECT chunk_key, resource_id, path, superseded_at, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY chunk_key",
      );
      await client.query("COMMIT");
      this.index.replaceAll(rows.map(toEntry));
      this.applied = g;
    } finally {
      client.release();
    }
  }

  /**
   * Applies the logged changes after the applied generation, in commit order, from one snapshot; when
   * the log was pruned past that generation (this server went unseen beyond the horizon), reloads every
   * vector instead.
   */
  private async replay(): Promise<void> {
    if (await this.replayLog()) return;
    this.reloads += 1;
    await this.reloadAll();
  }

  /** The log replay itself; false (nothing applied) when the log no longer holds what this server misses. */
  private async replayLog(): Promise<boolean> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const state = await client.query<{ g: string; pruned: string }>(
        "SELECT generation::text AS g, vector_changes_pruned_through::text AS pruned FROM index_state WHERE id = 1",
      );
      const g = BigInt(state.rows[0].g);
      if (this.applied < BigInt(state.rows[0].pruned)) {
        await client.query("COMMIT");
        return false;
      }
      const changes = await client.query<ChangeRow>(
        "SELECT generation::text AS generation, resource_reloaded, added, superseded, removed, at FROM vector_changes WHERE generation > $1 ORDER BY generation",
        [this.applied.toString()],
      );
      for (const ch of changes.rows) {
        if (ch.resource_reloaded !== null) {
          const { rows } = await client.query<EntryRow>(
            "SELECT chunk_key, resource_id, path, superseded_at, embedding FROM chunks WHERE resource_id = $1 AND embedding IS NOT NULL ORDER BY chunk_key",
            [ch.resource_reloaded],
          );
          this.index.clearResource(ch.resource_reloaded);
          this.index.upsert(rows.map(toEntry));
        }
        if (ch.added.length > 0) {
          const { rows } = await client.query<EntryRow>(
            "SELECT chunk_key, resource_id, path, superseded_at, embedding FROM chunks WHERE chunk_key = ANY($1::bigint[]) AND embedding IS NOT NULL",
            [ch.added],
          );
          this.index.upsert(rows.map(toEntry));
        }
        if (ch.superseded.length > 0) this.index.supersede(ch.superseded.map(Number), Number(ch.at));
        if (ch.removed.length > 0) this.index.remove(ch.removed.map(Number));
      }
      await client.query("COMMIT");
      if (g > this.applied) this.applied = g;
      return true;
    } finally {
      client.release();
    }
  }
}

function toEntry(r: EntryRow): VectorEntry {
  return {
    chunkKey: r.chunk_key,
    resourceId: r.resource_id,
    path: r.path,
    supersededAt: r.superseded_at,
    vector: vectorFromBytes(r.embedding),
  };
}
