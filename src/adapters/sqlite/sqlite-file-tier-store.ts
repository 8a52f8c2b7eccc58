import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync } from "node:fs";
import { open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { fragmentKey, type TierFragment } from "../../domain/tier-fragment.js";
import type { LoadedFragment, TierStore } from "../../ports/tier-store.js";
import type { SqliteDatabase } from "../kit/sqlite-database.js";
import { WalSync } from "../kit/wal-sync.js";
import { withoutFsync } from "../kit/without-fsync.js";
import { loadedFragmentOf, type TierRow } from "../kit/tier-rows.js";

interface Row extends TierRow {
  cold_file: string | null;
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
/** Ids per catalogue query when reading contents. */
const READ_BATCH = 500;

/**
 * The embedded tier store: one SQLite table is the catalogue of every fragment (tier, project, metadata,
 * summary, LRU order) and holds the content of hot and warm fragments (hot is written through, so a restart
 * loses none of it); the content of cold fragments lives in files under `<dataDir>/cold/`, one per
 * fragment version, written atomically (temp file, fsync, rename, fsync of the directory).
 *
 * Fragment ids are namespaced per principal: the catalogue's primary key is (owner, id), and a cold file's
 * name hashes the unambiguous pair (plus the version's access number), so two owners' fragments of the same
 * id never share a row or a file; the file also records both, checked on every read.
 *
 * A move between SQLite and the files is crash-safe because the destination is made durable first and the
 * catalogue row, committed second, decides which copy is real: into cold, the file is written before the row
 * points at it; out of cold, the row takes the content before the file is unlinked. A crash between the
 * two steps leaves at most an unreferenced file, which `load` deletes, so a fragment is in exactly one tier.
 *
 * Group commit: a row is committed without an fsync (WAL, `synchronous = NORMAL`: it survives a crash of the
 * process at once), and `sync()` makes every row committed so far durable with one fsync of the WAL file, run
 * on libuv's thread pool: writers that arrive while a sync runs share the next one, and the serving thread
 * never waits on the disk (a commit with `synchronous = FULL` held it for an fsync, ~0.25 ms here, per write).
 * A file a row stopped referencing is unlinked only after the sync that made that row durable.
 * @example const store = new SqliteFileTierStore(openSqliteDatabase(`${dir}/acms.db`), `${dir}/cold`);
 */
export class SqliteFileTierStore implements TierStore {
  /** Buffered read accesses, by fragmentKey(owner, id). */
  private readonly pending = new Map<string, { owner: string; id: string; at: number; seq: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly stmts: ReturnType<typeof prepareStatements>;
  /** Syncs the WAL in groups; absent when the database has no WAL (`:memory:`): each commit is as durable as it gets. */
  private readonly wal: WalSync | undefined;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly coldDir: string,
  ) {
    mkdirSync(coldDir, { recursive: true });
    refusePreReleaseSchema(db);
    db.exec(`
      CREATE TABLE IF NOT EXISTS tier_fragments (
        owner TEXT NOT NULL CHECK (length(owner) > 0),
        id TEXT NOT NULL,
        tier TEXT NOT NULL CHECK (tier IN ('hot', 'warm', 'cold')),
        project_name TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        metadata TEXT NOT NULL,
        content TEXT,
        cold_file TEXT,
        summary TEXT NOT NULL,
        token_count INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_accessed_at INTEGER NOT NULL,
        access_seq INTEGER NOT NULL,
        PRIMARY KEY (owner, id),
        CHECK ((tier = 'cold' AND content IS NULL AND cold_file IS NOT NULL)
            OR (tier <> 'cold' AND content IS NOT NULL AND cold_file IS NULL))
      ) STRICT;
    `);
    this.stmts = prepareStatements(db);
    this.wal = !db.memory && db.pragma("journal_mode", { simple: true }) === "wal" ? new WalSync(`${db.name}-wal`) : undefined;
  }

  /** Deletes what interrupted moves left behind, then returns every fragment in access order. */
  async load(): Promise<LoadedFragment[]> {
    this.flush();
    const rows = this.stmts.all.all();
    const referenced = new Set(rows.filter((r) => r.cold_file !== null).map((r) => r.cold_file as string));
    const present = new Set(readdirSync(this.coldDir).filter((name) => OWN_FILE.test(name)));
    for (const name of present) {
      if (!referenced.has(name)) await unlink(join(this.coldDir, name));
    }
    const lost = rows.filter((r) => r.cold_file !== null && !present.has(r.cold_file));
    if (lost.length > 0) {
      // Only a file deleted behind the service's back gets here: its row cannot be served, so it goes.
      const drop = this.db.transaction((gone: Row[]) => gone.forEach((r) => this.stmts.remove.run(r.owner, r.id)));
      drop(lost);
      // Operators' log: names the files' fragments as owner/id (local stderr, never a client answer).
      process.stderr.write(
        `acms: tier store: ${lost.length} cold fragment file(s) missing under ${this.coldDir}; dropped ${lost.map((r) => `${r.owner}/${r.id}`).join(", ")}\n`,
      );
    }
    const lostKeys = new Set(lost.map((r) => fragmentKey(r.owner, r.id)));
    return rows.filter((r) => !lostKeys.has(fragmentKey(r.owner, r.id))).map(loadedFragmentOf);
  }

  async readContents(owner: string, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const cold: Array<{ id: string; file: string }> = [];
    for (let i = 0; i < ids.length; i += READ_BATCH) {
      const batch = ids.slice(i, i + READ_BATCH);
      const rows = this.stmts.contents.all(owner, JSON.stringify(batch));
      for (const r of rows) {
        if (r.content !== null) out.set(r.id, r.content);
        else if (r.cold_file !== null) cold.push({ id: r.id, file: r.cold_file });
      }
    }
    // Bounded parallelism: a strategist's full view may name thousands of cold files.
    for (let i = 0; i < cold.length; i += COLD_READ_PARALLELISM) {
      const batch = cold.slice(i, i + COLD_READ_PARALLELISM);
      const files = await Promise.all(batch.map((c) => this.readCold(owner, c.id, c.file)));
      batch.forEach((c, j) => out.set(c.id, files[j]));
    }
    return out;
  }

  async save(fragment: TierFragment): Promise<void> {
    const previous = this.stmts.coldFileOf.get(fragment.owner, fragment.id)?.cold_file ?? null;
    let coldFile: string | null = null;
    if (fragment.tier === "cold") {
      coldFile = coldFileName(fragment.owner, fragment.id, fragment.accessSeq);
      const body: ColdFile = { owner: fragment.owner, id: fragment.id, content: fragment.content };
      await this.writeAtomically(coldFile, JSON.stringify(body));
    }
    this.pending.delete(fragmentKey(fragment.owner, fragment.id));
    try {
      this.commit(() => this.upsert(fragment, coldFile));
    } catch (err) {
      if (coldFile !== null) await unlinkIfPresent(join(this.coldDir, coldFile));
      throw err;
    }
    if (previous !== null && previous !== coldFile) await this.unlinkWhenDurable(previous);
  }

  /**
   * Runs one write as its own commit: without an fsync when the WAL is synced in groups (marked for the next
   * `sync`), else as the connection commits (`synchronous = FULL`).
   */
  private commit(write: () => void): void {
    const wal = this.wal;
    if (!wal) return write();
    withoutFsync(this.db, write);
    wal.wrote();
  }

  /** Unlinks a cold file once the row that stopped referencing it is durable (at once without a WAL to sync). */
  private async unlinkWhenDurable(file: string): Promise<void> {
    const path = join(this.coldDir, file);
    if (this.wal) this.wal.afterSync(() => unlinkIfPresent(path));
    else await unlinkIfPresent(path);
  }

  sync(): Promise<void> | undefined {
    return this.wal?.sync();
  }

  /** How many fsyncs of the WAL group commit has made (0 without a WAL). */
  get walSyncs(): number {
    return this.wal?.syncs ?? 0;
  }

  private upsert(fragment: TierFragment, coldFile: string | null): void {
    this.stmts.upsert.run({
      owner: fragment.owner,
      id: fragment.id,
      tier: fragment.tier,
      project_name: fragment.projectName,
      resource_id: fragment.resourceId,
      metadata: JSON.stringify(fragment.metadata),
      content: fragment.tier === "cold" ? null : fragment.content,
      cold_file: coldFile,
      summary: fragment.summary,
      token_count: fragment.tokenCount,
      created_at: fragment.createdAt.getTime(),
      updated_at: fragment.updatedAt.getTime(),
      last_accessed_at: fragment.lastAccessedAt.getTime(),
      access_seq: fragment.accessSeq,
    });
  }

  async remove(owner: string, id: string): Promise<void> {
    const previous = this.stmts.coldFileOf.get(owner, id)?.cold_file ?? null;
    this.pending.delete(fragmentKey(owner, id));
    this.commit(() => this.stmts.remove.run(owner, id));
    if (previous !== null) await this.unlinkWhenDurable(previous);
  }

  recordAccess(owner: string, id: string, lastAccessedAt: Date, seq: number): void {
    this.pending.set(fragmentKey(owner, id), { owner, id, at: lastAccessedAt.getTime(), seq });
    if (!this.timer) {
      this.timer = setTimeout(() => {
        try {
          this.flush();
        } catch (err) {
          // Only LRU order is at stake (never a fragment): log, never crash the process from a timer.
          process.stderr.write(`acms: tier store: could not record read accesses: ${err instanceof Error ? err.message : String(err)}\n`);
        }
      }, ACCESS_FLUSH_MS);
      this.timer.unref();
    }
  }

  async close(): Promise<void> {
    this.flush();
    await this.wal?.close();
  }

  /** Writes the buffered accesses in one transaction; a later save's larger seq is never overwritten. */
  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const entries = [...this.pending.values()];
    this.pending.clear();
    // Only LRU order is at stake here, never a fragment: commit without the fsync (the next durable commit
    // syncs these pages too). An fsync per flush blocked the serving thread for milliseconds, 20 times a
    // second under steady reads.
    withoutFsync(this.db, () =>
      this.db.transaction(() => {
        for (const a of entries) this.stmts.touch.run(a.at, a.seq, a.owner, a.id, a.seq);
      })(),
    );
  }

  /** The content of a cold file, refused unless it holds exactly `owner`'s fragment `id`. */
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

/**
 * The name of the cold file of one version of `owner`'s fragment `id`: a hash of the unambiguous pair (a
 * JSON array, so no owner/id split collides with another) and the version's access number, which every
 * save makes larger, so a move's new file never overwrites the copy it replaces.
 */
function coldFileName(owner: string, id: string, accessSeq: number): string {
  return `${createHash("sha256")
    .update(JSON.stringify([owner, id]))
    .digest("hex")
    .slice(0, 32)}-${accessSeq}.json`;
}

/**
 * Refuses a tier_fragments table from before fragment ids were namespaced per principal (no owner column):
 * its rows cannot be given an owner, and that schema was never released, so there is nothing to migrate.
 */
function refusePreReleaseSchema(db: SqliteDatabase): void {
  const columns = db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('tier_fragments')`).all();
  if (columns.length > 0 && !columns.some((c) => c.name === "owner")) {
    throw new Error(
      "tier store: table tier_fragments has the pre-release schema without per-principal owners; drop the table (DROP TABLE tier_fragments) and remove the cold/ folder to start the tiers empty",
    );
  }
}

/** The prepared statements of the store, made once per database handle. */
function prepareStatements(db: SqliteDatabase) {
  return {
    all: db.prepare<[], Row>(
      `SELECT owner, id, tier, project_name, resource_id, metadata, CASE WHEN tier = 'hot' THEN content END AS content,
              cold_file, summary, token_count, created_at, updated_at, last_accessed_at, access_seq
       FROM tier_fragments ORDER BY access_seq`,
    ),
    coldFileOf: db.prepare<[string, string], { cold_file: string | null }>(
      `SELECT cold_file FROM tier_fragments WHERE owner = ? AND id = ?`,
    ),
    upsert: db.prepare(
      `INSERT INTO tier_fragments (owner, id, tier, project_name, resource_id, metadata, content, cold_file, summary, token_count,
                                   created_at, updated_at, last_accessed_at, access_seq)
       VALUES (@owner, @id, @tier, @project_name, @resource_id, @metadata, @content, @cold_file, @summary, @token_count,
               @created_at, @updated_at, @last_accessed_at, @access_seq)
       ON CONFLICT (owner, id) DO UPDATE SET tier = excluded.tier, project_name = excluded.project_name,
         resource_id = excluded.resource_id, metadata = excluded.metadata, content = excluded.content,
         cold_file = excluded.cold_file, summary = excluded.summary, token_count = excluded.token_count,
         created_at = excluded.created_at, updated_at = excluded.updated_at,
         last_accessed_at = excluded.last_accessed_at, access_seq = excluded.access_seq`,
    ),
    contents: db.prepare<[string, string], { id: string; content: string | null; cold_file: string | null }>(
      `SELECT id, content, cold_file FROM tier_fragments WHERE owner = ? AND id IN (SELECT value FROM json_each(?))`,
    ),
    remove: db.prepare<[string, string]>(`DELETE FROM tier_fragments WHERE owner = ? AND id = ?`),
    touch: db.prepare<[number, number, string, string, number]>(
      `UPDATE tier_fragments SET last_accessed_at = ?, access_seq = ? WHERE owner = ? AND id = ? AND access_seq < ?`,
    ),
  };
}

async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
