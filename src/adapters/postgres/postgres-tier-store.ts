import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync } from "node:fs";
import { open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { fragmentKey, type TierFragment, type TierName } from "../../domain/tier-fragment.js";
import type { LoadedFragment, TierStore } from "../../ports/tier-store.js";
import { inTransaction, type PostgresPool } from "./postgres-pool.js";

interface Row {
  owner: string;
  id: string;
  tier: TierName;
  project_name: string;
  resource_id: string;
  metadata: string;
  content: string | null;
  cold_file: string | null;
  summary: string;
  token_count: number;
  created_at: number;
  updated_at: number;
  last_accessed_at: number;
  access_seq: number;
}

/** What a cold file holds: the owner and id (both checked on read) and the full original content. */
interface ColdFile {
  owner: string;
  id: string;
  content: string;
}

/** The files this store writes (cold versions and their temp files); anything else in the folder is left alone. */
const OWN_FILE = /^[0-9a-f]{32}-\d+\.json(\.[0-9a-f]+\.tmp)?$/;
/** How long read accesses wait to be written together, in ms. */
const ACCESS_FLUSH_MS = 50;
/** Cold files read at once (well under any open-files limit). */
const COLD_READ_PARALLELISM = 64;

const COLUMNS = "owner, id, tier, project_name, resource_id, metadata, content, cold_file, summary, token_count, created_at, updated_at, last_accessed_at, access_seq";

/**
 * The tier store with its catalogue in PostgreSQL (`tier_fragments`): every fragment's tier, project,
 * metadata, summary and LRU order, and the content of hot fragments (written through, so a restart
 * loses none of it) and warm ones (the warm tier is the table). Cold content stays in files under
 * `<dataDir>/cold/`, one per fragment version, written atomically.
 *
 * The embedded store's crash-safe move rule holds: the destination is made durable first and the
 * catalogue row, committed second, decides which copy is real. Into cold, the file is fsynced before the
 * row points at it; out of cold, the row takes the content before the file is unlinked. A crash between
 * the two leaves at most an unreferenced file, which `load` deletes, so a fragment is in exactly one tier.
 */
export class PostgresTierStore implements TierStore {
  private readonly pending = new Map<string, { owner: string; id: string; at: number; seq: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: PostgresPool,
    private readonly coldDir: string,
  ) {
    mkdirSync(coldDir, { recursive: true });
  }

  async load(): Promise<LoadedFragment[]> {
    await this.flush();
    const { rows } = await this.pool.query<Row>(
      `SELECT owner, id, tier, project_name, resource_id, metadata, CASE WHEN tier = 'hot' THEN content END AS content,
              cold_file, summary, token_count, created_at, updated_at, last_accessed_at, access_seq
         FROM tier_fragments ORDER BY access_seq`,
    );
    const referenced = new Set(rows.filter((r) => r.cold_file !== null).map((r) => r.cold_file as string));
    const present = new Set(readdirSync(this.coldDir).filter((name) => OWN_FILE.test(name)));
    for (const name of present) {
      if (!referenced.has(name)) await unlink(join(this.coldDir, name));
    }
    const lost = rows.filter((r) => r.cold_file !== null && !present.has(r.cold_file));
    if (lost.length > 0) {
      // Only a file deleted behind the service's back gets here: its row cannot be served, so it goes.
      await inTransaction(this.pool, async (c) => {
        for (const r of lost) await c.query("DELETE FROM tier_fragments WHERE owner = $1 AND id = $2", [r.owner, r.id]);
      });
      process.stderr.write(
        `acms: tier store: ${lost.length} cold fragment file(s) missing under ${this.coldDir}; dropped ${lost.map((r) => `${r.owner}/${r.id}`).join(", ")}\n`,
      );
    }
    const lostKeys = new Set(lost.map((r) => fragmentKey(r.owner, r.id)));
    return rows.filter((r) => !lostKeys.has(fragmentKey(r.owner, r.id))).map(fromRow);
  }

  async readContents(owner: string, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const { rows } = await this.pool.query<{ id: string; content: string | null; cold_file: string | null }>(
      "SELECT id, content, cold_file FROM tier_fragments WHERE owner = $1 AND id = ANY($2::text[])",
      [owner, [...ids]],
    );
    const cold: Array<{ id: string; file: string }> = [];
    for (const r of rows) {
      if (r.content !== null) out.set(r.id, r.content);
      else if (r.cold_file !== null) cold.push({ id: r.id, file: r.cold_file });
    }
    for (let i = 0; i < cold.length; i += COLD_READ_PARALLELISM) {
      const batch = cold.slice(i, i + COLD_READ_PARALLELISM);
      const files = await Promise.all(batch.map((c) => this.readCold(owner, c.id, c.file)));
      batch.forEach((c, j) => out.set(c.id, files[j]));
    }
    return out;
  }

  async save(fragment: TierFragment): Promise<void> {
    const previous = await this.coldFileOf(fragment.owner, fragment.id);
    let coldFile: string | null = null;
    if (fragment.tier === "cold") {
      coldFile = coldFileName(fragment.owner, fragment.id, fragment.accessSeq);
      const body: ColdFile = { owner: fragment.owner, id: fragment.id, content: fragment.content };
      await this.writeAtomically(coldFile, JSON.stringify(body));
    }
    this.pending.delete(fragmentKey(fragment.owner, fragment.id));
    try {
      await this.pool.query(
        `INSERT INTO tier_fragments (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
         ON CONFLICT (owner, id) DO UPDATE SET tier = excluded.tier, project_name = excluded.project_name,
           resource_id = excluded.resource_id, metadata = excluded.metadata, content = excluded.content,
           cold_file = excluded.cold_file, summary = excluded.summary, token_count = excluded.token_count,
           created_at = excluded.created_at, updated_at = excluded.updated_at,
           last_accessed_at = excluded.last_accessed_at, access_seq = excluded.access_seq`,
        [
          fragment.owner,
          fragment.id,
          fragment.tier,
          fragment.projectName,
          fragment.resourceId,
          JSON.stringify(fragment.metadata),
          fragment.tier === "cold" ? null : fragment.content,
          coldFile,
          fragment.summary,
          fragment.tokenCount,
          fragment.createdAt.getTime(),
          fragment.updatedAt.getTime(),
          fragment.lastAccessedAt.getTime(),
          fragment.accessSeq,
        ],
      );
    } catch (err) {
      if (coldFile !== null) await unlinkIfPresent(join(this.coldDir, coldFile));
      throw err;
    }
    if (previous !== null && previous !== coldFile) await unlinkIfPresent(join(this.coldDir, previous));
  }

  async remove(owner: string, id: string): Promise<void> {
    const previous = await this.coldFileOf(owner, id);
    this.pending.delete(fragmentKey(owner, id));
    await this.pool.query("DELETE FROM tier_fragments WHERE owner = $1 AND id = $2", [owner, id]);
    if (previous !== null) await unlinkIfPresent(join(this.coldDir, previous));
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

  private async coldFileOf(owner: string, id: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ cold_file: string | null }>("SELECT cold_file FROM tier_fragments WHERE owner = $1 AND id = $2", [owner, id]);
    return rows[0]?.cold_file ?? null;
  }

  private async readCold(owner: string, id: string, file: string): Promise<string> {
    const body = JSON.parse(await readFile(join(this.coldDir, file), "utf8")) as ColdFile;
    if (body.owner !== owner || body.id !== id) {
      throw new Error(`cold file ${file} holds fragment ${body.owner}/${body.id}, expected ${owner}/${id}`);
    }
    return body.content;
  }

  /** Temp file, fsync, rename over, fsync the directory: the file is whole and durable, or absent. */
  private async writeAtomically(name: string, data: string): Promise<void> {
    const target = join(this.coldDir, name);
    const temp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temp, "wx");
    try {
      await handle.writeFile(data, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, target);
    } catch (err) {
      await unlinkIfPresent(temp);
      throw err;
    }
    const dir = await open(this.coldDir, "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}

/** A cold file's name: a hash of the (owner, id) pair and the version's access number, as the embedded store names it. */
function coldFileName(owner: string, id: string, accessSeq: number): string {
  return `${createHash("sha256").update(JSON.stringify([owner, id])).digest("hex").slice(0, 32)}-${accessSeq}.json`;
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
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
