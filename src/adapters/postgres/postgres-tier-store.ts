import { readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import type { TierFragment, TierName } from "../../domain/tier-fragment.js";
import { fragmentKey } from "../../domain/tier-fragment.js";
import type { LoadedFragment, TierStore } from "../../ports/tier-store.js";
import type { PostgresPool } from "./postgres-pool.js";

const compress = promisify(gzip);
const decompress = promisify(gunzip);

interface Row {
  owner: string;
  id: string;
  tier: TierName;
  project_name: string;
  resource_id: string;
  metadata: string;
  content: string | null;
  summary: string;
  token_count: number;
  created_at: number;
  updated_at: number;
  last_accessed_at: number;
  access_seq: number;
}

/** What a cold file of an earlier version holds: the owner and id (both checked) and the full content. */
interface LegacyColdFile {
  owner: string;
  id: string;
  content: string;
}

/** How long read accesses wait to be written together, in ms. */
const ACCESS_FLUSH_MS = 50;

const COLUMNS = "owner, id, tier, project_name, resource_id, metadata, content, cold_content, summary, token_count, created_at, updated_at, last_accessed_at, access_seq";

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
 * Earlier versions kept cold content in files under each server's `<dataDir>/cold`; given that folder,
 * `load` moves such files into their rows (the row takes the content first, the file is unlinked after:
 * a crash in between leaves only a stray file).
 */
export class PostgresTierStore implements TierStore {
  private readonly pending = new Map<string, { owner: string; id: string; at: number; seq: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: PostgresPool,
    /** Where an earlier version of this store wrote cold files (`<dataDir>/cold`), to move them in. */
    private readonly legacyColdDir?: string,
  ) {}

  async load(): Promise<LoadedFragment[]> {
    await this.flush();
    if (this.legacyColdDir !== undefined) await this.moveLegacyColdFiles(this.legacyColdDir);
    const { rows } = await this.pool.query<Row>(
      `SELECT owner, id, tier, project_name, resource_id, metadata, CASE WHEN tier = 'hot' THEN content END AS content,
              summary, token_count, created_at, updated_at, last_accessed_at, access_seq
         FROM tier_fragments ORDER BY access_seq`,
    );
    return rows.map(fromRow);
  }

  async readContents(owner: string, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const { rows } = await this.pool.query<{ id: string; content: string | null; cold_content: Buffer | null }>(
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
    await this.pool.query(
      `INSERT INTO tier_fragments (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (owner, id) DO UPDATE SET tier = excluded.tier, project_name = excluded.project_name,
         resource_id = excluded.resource_id, metadata = excluded.metadata, content = excluded.content,
         cold_file = NULL, cold_content = excluded.cold_content, summary = excluded.summary,
         token_count = excluded.token_count, created_at = excluded.created_at, updated_at = excluded.updated_at,
         last_accessed_at = excluded.last_accessed_at, access_seq = excluded.access_seq`,
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
  }

  async remove(owner: string, id: string): Promise<void> {
    this.pending.delete(fragmentKey(owner, id));
    await this.pool.query("DELETE FROM tier_fragments WHERE owner = $1 AND id = $2", [owner, id]);
  }

  recordAccess(owner: string, id: string, lastAccessedAt: Date, seq: number): void {
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
        `UPDATE tier_fragments f SET last_accessed_at = a.at, access_seq = a.seq
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

function fromRow(r: Row): LoadedFragment {
  return {
    owner: r.owner,
    id: r.id,
    tier: r.tier,
    projectName: r.project_name,
    resourceId: r.resource_id,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    content: r.tier === "hot" ? (r.content ?? "") : undefined,
    summary: r.summary,
    tokenCount: r.token_count,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    lastAccessedAt: new Date(r.last_accessed_at),
    accessSeq: r.access_seq,
  };
}
