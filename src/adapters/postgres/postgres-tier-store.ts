import { readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import type { TierFragment } from "../../domain/tier-fragment.js";
import { fragmentKey } from "../../domain/tier-fragment.js";
import type { LoadedFragment, SharedTierStore, TierChanges } from "../../ports/tier-store.js";
import type { PostgresClient, PostgresPool } from "./postgres-pool.js";
import { loadedFragmentOf, type TierRow } from "../kit/tier-rows.js";

const compress = promisify(gzip);
const decompress = promisify(gunzip);

interface Row extends TierRow {
  change_seq: number;
}

/** What a cold file of an earlier version holds: the owner and id (both checked) and the full content. */
interface LegacyColdFile {
  owner: string;
  id: string;
  content: string;
}

/** How long read accesses wait to be written together, in ms. */
const ACCESS_FLUSH_MS = 50;

const COLUMNS =
  "owner, id, tier, project_name, resource_id, metadata, content, cold_content, summary, token_count, created_at, updated_at, last_accessed_at, access_seq, change_seq";

/** What a server keeps of a fragment row: hot content only. */
const LOADED = `owner, id, tier, project_name, resource_id, metadata, CASE WHEN tier = 'hot' THEN content END AS content,
  summary, token_count, created_at, updated_at, last_accessed_at, access_seq, change_seq`;

/** The advisory lock every tier operation of every server takes ("acmt" in ASCII; migrations take "acms"). */
const TIER_LOCK = 0x61636d74;

/** Removals kept for servers that have not looked for a while; one further behind reloads every fragment. */
const REMOVALS_KEPT = 65_536;
/** How many removals (by this server) between two prunings of the old ones. */
const PRUNE_EVERY = 1024;

/** The highest change number committed: under the tier lock, every number up to it is visible. */
const TOP_SQL = `SELECT greatest(coalesce((SELECT max(change_seq) FROM tier_fragments), 0),
  coalesce((SELECT max(change_seq) FROM tier_removals), 0), (SELECT removals_pruned_through FROM tier_sync)) AS top`;

/** The transaction a coordinated call runs in. */
interface Coordination {
  client: PostgresClient;
  write: boolean;
  /** Whether anything was written (a rollback then leaves this server's memory ahead of the database). */
  wrote: boolean;
  /** The largest change number this transaction took. */
  top: number;
  /** Access writes issued (recordAccess is synchronous): awaited before commit. */
  accesses: Promise<unknown>[];
}

/**
 * The tier store wholly in PostgreSQL (`tier_fragments`), so every server on the database shares it:
 * each fragment's tier, project, metadata, summary and LRU order, the content of hot fragments (written
 * through, so a restart loses none of it) and warm ones, and the content of cold ones, gzip-compressed
 * in `cold_content` (the cold tier trades a decompression on read for a third of the space).
 *
 * A fragment is one row, so a move between tiers is one committed statement: the crash-safe move rule
 * of the embedded store (new copy durable before the old one goes) holds by construction, and a
 * fragment is in exactly one tier after any crash.
 *
 * Several servers on one database follow each other's placement (SharedTierStore): every write of a row
 * takes the next number of `tier_change_seq` and every deletion leaves a numbered row in `tier_removals`;
 * `coordinated` runs one operation as a transaction under an advisory lock (exclusive for operations that
 * write, shared for views), first reading what changed since this server's last look. The numbers are
 * taken under the exclusive lock, so they commit in order and "every change above the last number seen"
 * misses none. Budgets are then enforced on the deployment's current placement: two servers storing into
 * one project at once are serialised, and neither sees the tiers stale. The metrics' counters (hits,
 * misses, moves) are rows of `tier_counters`, added to in the same transactions.
 *
 * Earlier versions kept cold content in files under each server's `<dataDir>/cold`; given that folder,
 * `load` moves such files into their rows (the row takes the content first, the file is unlinked after:
 * a crash in between leaves only a stray file).
 */
export class PostgresTierStore implements SharedTierStore {
  private readonly pending = new Map<string, { owner: string; id: string; at: number; seq: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** The highest change number this server has applied; -1 before its first look (a full load). */
  private seen = -1;
  private legacyMoved = false;
  /** Removals this server made since it last pruned old ones. */
  private removals = 0;
  /** The coordinated call in progress (the tier service runs one at a time). */
  private tx: Coordination | undefined;

  constructor(
    private readonly pool: PostgresPool,
    /** Where an earlier version of this store wrote cold files (`<dataDir>/cold`), to move them in. */
    private readonly legacyColdDir?: string,
    /** How many change numbers of removals are kept, and how many removals between prunings (tests shrink both). */
    private readonly pruning: { kept: number; every: number } = { kept: REMOVALS_KEPT, every: PRUNE_EVERY },
  ) {}

  async load(): Promise<LoadedFragment[]> {
    await this.flush();
    if (this.legacyColdDir !== undefined) await this.moveLegacyColdFiles(this.legacyColdDir);
    const { rows } = await this.pool.query<Row>(`SELECT ${LOADED} FROM tier_fragments ORDER BY access_seq`);
    return rows.map(loadedFragmentOf);
  }

  async coordinated<T>(write: boolean, apply: (changes: TierChanges) => void, work: () => Promise<T>): Promise<T> {
    if (this.tx) throw new Error("tier store: coordinated calls do not nest");
    if (!this.legacyMoved && this.legacyColdDir !== undefined) await this.moveLegacyColdFiles(this.legacyColdDir);
    this.legacyMoved = true;
    await this.flush();
    const client = await this.pool.connect();
    const tx: Coordination = { client, write, wrote: false, top: 0, accesses: [] };
    let broken = false;
    try {
      await client.query(`BEGIN; SELECT pg_advisory_xact_lock${write ? "" : "_shared"}(${TIER_LOCK})`);
      try {
        const changes = await this.changesSince(client);
        this.seen = -1;
        apply(changes.changes);
        this.seen = changes.top;
        this.tx = tx;
        const out = await work();
        await Promise.all(tx.accesses);
        await client.query("COMMIT");
        // Under the exclusive lock nobody else took a number: this server has seen everything up to its own.
        this.seen = Math.max(this.seen, tx.top);
        return out;
      } catch (err) {
        // A rollback of writes this server's memory already holds: it reloads everything at its next call.
        if (tx.wrote) this.seen = -1;
        try {
          await client.query("ROLLBACK");
        } catch {
          broken = true;
        }
        throw err;
      }
    } finally {
      this.tx = undefined;
      client.release(broken);
    }
  }

  /** What changed since this server's last look (everything when it has not looked, or fell too far behind). */
  private async changesSince(client: PostgresClient): Promise<{ changes: TierChanges; top: number }> {
    const since = this.seen;
    if (since >= 0) {
      const results = (await client.query(
        `${TOP_SQL}; SELECT removals_pruned_through AS pruned FROM tier_sync;
         SELECT ${LOADED} FROM tier_fragments WHERE change_seq > ${since} ORDER BY access_seq;
         SELECT owner, id FROM tier_removals WHERE change_seq > ${since}`,
      )) as unknown as [
        { rows: { top: number }[] },
        { rows: { pruned: number }[] },
        { rows: Row[] },
        { rows: { owner: string; id: string }[] },
      ];
      if (results[1].rows[0].pruned <= since) {
        return {
          top: results[0].rows[0].top,
          changes: { full: false, saved: results[2].rows.map(loadedFragmentOf), removed: results[3].rows },
        };
      }
    }
    const results = (await client.query(`${TOP_SQL}; SELECT ${LOADED} FROM tier_fragments ORDER BY access_seq`)) as unknown as [
      { rows: { top: number }[] },
      { rows: Row[] },
    ];
    return { top: results[0].rows[0].top, changes: { full: true, saved: results[1].rows.map(loadedFragmentOf), removed: [] } };
  }

  /** The connection to write on: the coordinated call's transaction when one is open (which must allow writes). */
  private writer(): PostgresPool | PostgresClient {
    if (!this.tx) return this.pool;
    if (!this.tx.write) throw new Error("tier store: a write inside a read-only coordinated call");
    this.tx.wrote = true;
    return this.tx.client;
  }

  /** Notes a change number this call's transaction took. */
  private took(rows: { change_seq: number }[]): void {
    if (this.tx) for (const r of rows) this.tx.top = Math.max(this.tx.top, r.change_seq);
  }

  async readContents(owner: string, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const { rows } = await (this.tx?.client ?? this.pool).query<{ id: string; content: string | null; cold_content: Buffer | null }>(
      "SELECT id, content, cold_content FROM tier_fragments WHERE owner = $1 AND id = ANY($2::text[]) AND cold_file IS NULL",
      [owner, [...ids]],
    );
    for (const r of rows) {
      if (r.content !== null) out.set(r.id, r.content);
      else if (r.cold_content !== null) out.set(r.id, (await decompress(r.cold_content)).toString("utf8"));
    }
    return out;
  }

  async save(fragment: TierFragment): Promise<void> {
    const cold = fragment.tier === "cold" ? await compress(Buffer.from(fragment.content, "utf8")) : null;
    this.pending.delete(fragmentKey(fragment.owner, fragment.id));
    const { rows } = await this.writer().query<{ change_seq: number }>(
      `INSERT INTO tier_fragments (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, nextval('tier_change_seq'))
       ON CONFLICT (owner, id) DO UPDATE SET tier = excluded.tier, project_name = excluded.project_name,
         resource_id = excluded.resource_id, metadata = excluded.metadata, content = excluded.content,
         cold_file = NULL, cold_content = excluded.cold_content, summary = excluded.summary,
         token_count = excluded.token_count, created_at = excluded.created_at, updated_at = excluded.updated_at,
         last_accessed_at = excluded.last_accessed_at, access_seq = excluded.access_seq, change_seq = excluded.change_seq
       RETURNING change_seq`,
      [
        fragment.owner,
        fragment.id,
        fragment.tier,
        fragment.projectName,
        fragment.resourceId,
        JSON.stringify(fragment.metadata),
        cold === null ? fragment.content : null,
        cold,
        fragment.summary,
        fragment.tokenCount,
        fragment.createdAt.getTime(),
        fragment.updatedAt.getTime(),
        fragment.lastAccessedAt.getTime(),
        fragment.accessSeq,
      ],
    );
    this.took(rows);
  }

  async remove(owner: string, id: string): Promise<void> {
    this.pending.delete(fragmentKey(owner, id));
    const db = this.writer();
    const { rows } = await db.query<{ change_seq: number }>(
      `WITH gone AS (DELETE FROM tier_fragments WHERE owner = $1 AND id = $2 RETURNING owner, id)
       INSERT INTO tier_removals (change_seq, owner, id) SELECT nextval('tier_change_seq'), owner, id FROM gone RETURNING change_seq`,
      [owner, id],
    );
    this.took(rows);
    const n = rows[0]?.change_seq ?? 0;
    if (rows.length > 0) this.removals += 1;
    const { kept, every } = this.pruning;
    if (this.tx && this.removals >= every && n > kept) {
      this.removals = 0;
      await db.query("DELETE FROM tier_removals WHERE change_seq <= $1", [n - kept]);
      await db.query("UPDATE tier_sync SET removals_pruned_through = greatest(removals_pruned_through, $1)", [n - kept]);
    }
  }

  async addCounts(pool: string, counts: Readonly<Record<string, number>>): Promise<void> {
    const names = Object.keys(counts).filter((name) => counts[name] !== 0);
    if (names.length === 0) return;
    await this.writer().query(
      `INSERT INTO tier_counters (pool, name, n) SELECT $1, c.name, c.n FROM unnest($2::text[], $3::bigint[]) AS c (name, n)
       ON CONFLICT (pool, name) DO UPDATE SET n = tier_counters.n + excluded.n`,
      [pool, names, names.map((name) => counts[name])],
    );
  }

  async readCounts(pools: readonly string[]): Promise<Record<string, number>> {
    const { rows } = await (this.tx?.client ?? this.pool).query<{ name: string; n: string }>(
      "SELECT name, sum(n)::text AS n FROM tier_counters WHERE pool = ANY($1::text[]) GROUP BY name",
      [[...pools]],
    );
    return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]));
  }

  recordAccess(owner: string, id: string, lastAccessedAt: Date, seq: number): void {
    if (this.tx) {
      // Inside a coordinated call: written in its transaction, so the other servers' LRU order has it.
      const tx = this.tx;
      const db = this.writer();
      const written = db
        .query<{ change_seq: number }>(
          `UPDATE tier_fragments SET last_accessed_at = $3, access_seq = $4, change_seq = nextval('tier_change_seq')
              WHERE owner = $1 AND id = $2 AND access_seq < $4 RETURNING change_seq`,
          [owner, id, lastAccessedAt.getTime(), seq],
        )
        .then(({ rows }) => {
          for (const r of rows) tx.top = Math.max(tx.top, r.change_seq);
        });
      // Awaited before commit; a call that fails first rolls back and never awaits it.
      written.catch(() => undefined);
      tx.accesses.push(written);
      return;
    }
    this.pending.set(fragmentKey(owner, id), { owner, id, at: lastAccessedAt.getTime(), seq });
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.flush().catch((err: unknown) => {
          // Only LRU order is at stake (never a fragment): log, never crash the process from a timer.
          process.stderr.write(`acms: tier store: could not record read accesses: ${err instanceof Error ? err.message : String(err)}\n`);
        });
      }, ACCESS_FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Every write joins the coordinated call's transaction, durable when it commits (before the service answers). */
  sync(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    await this.flush();
  }

  /** Writes the buffered accesses in one transaction; a later save's larger seq is never overwritten. */
  private flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const entries = [...this.pending.values()];
    this.pending.clear();
    this.flushing = this.flushing.then(async () => {
      if (entries.length === 0) return;
      await this.pool.query(
        `UPDATE tier_fragments f SET last_accessed_at = a.at, access_seq = a.seq, change_seq = nextval('tier_change_seq')
           FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS a (owner, id, at, seq)
          WHERE f.owner = a.owner AND f.id = a.id AND f.access_seq < a.seq`,
        [entries.map((e) => e.owner), entries.map((e) => e.id), entries.map((e) => e.at), entries.map((e) => e.seq)],
      );
    });
    return this.flushing;
  }

  /**
   * Moves the cold files an earlier version wrote under `dir` into their rows. A row whose file this
   * server does not have stays as it is (another server's data directory may hold it: that server moves
   * it when it starts); until then such a fragment is listed but its content is not served.
   */
  private async moveLegacyColdFiles(dir: string): Promise<void> {
    const { rows } = await this.pool.query<{ owner: string; id: string; cold_file: string }>(
      "SELECT owner, id, cold_file FROM tier_fragments WHERE cold_file IS NOT NULL",
    );
    let moved = 0;
    for (const r of rows) {
      let body: LegacyColdFile;
      try {
        body = JSON.parse(await readFile(join(dir, r.cold_file), "utf8")) as LegacyColdFile;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw err;
      }
      if (body.owner !== r.owner || body.id !== r.id) {
        throw new Error(`cold file ${r.cold_file} holds fragment ${body.owner}/${body.id}, expected ${r.owner}/${r.id}`);
      }
      await this.pool.query(
        "UPDATE tier_fragments SET cold_content = $1, cold_file = NULL WHERE owner = $2 AND id = $3 AND cold_file = $4",
        [await compress(Buffer.from(body.content, "utf8")), r.owner, r.id, r.cold_file],
      );
      await unlink(join(dir, r.cold_file)).catch(() => undefined);
      moved += 1;
    }
    if (moved > 0) process.stderr.write(`acms: tier store: moved ${moved} cold fragment file(s) from ${dir} into PostgreSQL\n`);
  }
}
