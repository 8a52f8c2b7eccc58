import type { Statement } from "better-sqlite3";
import { FairShareCache } from "../kit/fair-share-cache.js";
import type { SqliteDatabase } from "../kit/sqlite-database.js";
import { documentWriteLog, writeMarksOf, type DocumentWriteLog, type WriteMarks } from "./document-write-log.js";

/**
 * The chunk rows held at most, in bytes (counted as two a character of their text, path, resource id,
 * metadata and UKO URI, and ROW_OVERHEAD_BYTES a row): whatever the tenants search, the cache never holds
 * more than this.
 */
export const CHUNK_ROW_CACHE_BYTES = 32 * 1024 * 1024;

/** What a held row costs beyond its strings: the array, the map entry, the numbers. */
const ROW_OVERHEAD_BYTES = 160;

/**
 * One visible chunk version (raw row), in column order: building objects with named properties per row costs
 * more. Its UKO URI is built once, with the row (a string held is hashed once, however many answers use it).
 */
export type VisibleChunkRow = [
  chunkKey: number,
  resourceId: string,
  path: string,
  chunkIndex: number,
  supersededAt: number | null,
  docKey: number,
  text: string,
  metadata: string,
  ukoUri: string,
  /** `metadata` parsed, once it is (metadataOf): not a column. */
  parsedMetadata?: Readonly<Record<string, string>>,
];

/** The chunk rows, every visible version (`visible_documents`: staged uploads not yet published never), of the keys `@keys` (JSON). */
const VISIBLE_ROWS_SQL = `SELECT c.chunk_key, c.resource_id, c.path, c.chunk_index, d.superseded_at, c.doc_key, c.text, d.metadata,
    'uko://' || c.resource_id || '/' || c.path || '#' || c.chunk_index
  FROM chunks c JOIN visible_documents d ON d.doc_key = c.doc_key
  WHERE c.chunk_key IN (SELECT value FROM json_each(@keys))`;

/**
 * The document metadata of `row`, parsed from its JSON on first use and then kept in the row's last slot, frozen
 * (every answer that uses it shares it): a search answering with a hundred rows held parsed a hundred
 * documents' metadata on every call. It goes when the row does (a row dropped from the cache, erased included,
 * takes it along). A slot of the row, not a WeakMap beside it: the map's look-up was ~60 ns a row.
 */
export function metadataOf(row: VisibleChunkRow): Readonly<Record<string, string>> {
  return (row[9] ??= Object.freeze(JSON.parse(row[7]) as Record<string, string>));
}

/** The caches over each connection, so that a deletion drops what they hold at once (see `forgetChunkRows`). */
const cachesByDb = new WeakMap<SqliteDatabase, Set<WeakRef<ChunkRowCache>>>();

/**
 * Drops chunk `key`'s row, held from `db` for any principal: called by KeywordRows for every chunk deleted (a
 * version past retention, an erasure, an unpublished stage discarded: each passes `KeywordRows.delete`, with
 * or without a keyword row) and every keyword row rewritten, so an erased chunk's text stays in no cache,
 * searched again or not.
 */
export function forgetChunkRows(db: SqliteDatabase, key: number): void {
  const caches = cachesByDb.get(db);
  if (caches === undefined) return;
  for (const ref of caches) {
    const cache = ref.deref();
    if (cache === undefined) caches.delete(ref);
    else cache.forget(key);
  }
}

/** A row held, its resource's write marks, and the DocumentWriteLog's `seq` when it was read. */
interface HeldRow {
  row: VisibleChunkRow;
  marks: WriteMarks;
  readAt: number;
}

/**
 * The rows a keyword search answers with (a chunk's text, path and index, its document's metadata and
 * supersession time), held in memory by chunk key: reading them is most of a search that returns many
 * results (about 2.4 us a row from SQLite, the ranking itself a fraction of that). A chunk key is never
 * reused (AUTOINCREMENT) and its row never changes, but what a reader sees of it does (publication,
 * supersession, retention), and only through a write of its resource's documents: a row held is used while
 * no such write started since it was read (the connection's DocumentWriteLog; the row keeps its resource's
 * marks, so the test is one field read), and a row read while one is under way is not held. So a tenant uploading, or storing a fragment, leaves every other resource's rows
 * held. Another connection's commits (`PRAGMA data_version`) drop everything at the next search; a deleted
 * chunk's row is dropped at once (`forgetChunkRows`), not at the next search.
 *
 * Each principal holds its own (the budget, CHUNK_ROW_CACHE_BYTES, is shared: FairShareCache, as the posting
 * cache holds its words): one principal's searches never make another's faster, so how long a search takes
 * tells no one what others found. Past the budget the principal holding the most gives up its least recently
 * used rows first.
 */
export class ChunkRowCache {
  private readonly held: FairShareCache<number, HeldRow>;
  private readonly writes: DocumentWriteLog;
  private resets = -1;
  private dataVersion = -1;
  private reads = 0;
  private readonly read: Statement<{ keys: string }, VisibleChunkRow>;

  /** `maxBytes`: see CHUNK_ROW_CACHE_BYTES (0: nothing is held, every row is read; tests lower it). */
  constructor(
    db: SqliteDatabase,
    private readonly maxBytes = CHUNK_ROW_CACHE_BYTES,
  ) {
    this.held = new FairShareCache(maxBytes);
    this.writes = documentWriteLog(db);
    this.read = db.prepare<{ keys: string }, VisibleChunkRow>(VISIBLE_ROWS_SQL).raw(true);
    let caches = cachesByDb.get(db);
    if (caches === undefined) cachesByDb.set(db, (caches = new Set()));
    caches.add(new WeakRef(this));
  }

  /**
   * The visible versions of the chunks `keys` (in no particular order; a key with none is left out), as
   * `principal` holds them or read and then held for it. `dataVersion`: the connection's `PRAGMA
   * data_version`, read in the same synchronous step (the caller reads it anyway, for its own caches).
   */
  rows(principal: string, keys: readonly number[], dataVersion: number): VisibleChunkRow[] {
    this.sync(dataVersion);
    const writes = this.writes;
    const out: VisibleChunkRow[] = [];
    const missing: number[] = [];
    for (const key of keys) {
      const held = this.held.get(principal, key);
      if (held === undefined || held.marks.last > held.readAt) missing.push(key);
      else out.push(held.row);
    }
    if (missing.length === 0) return out;
    this.reads += 1;
    const read = this.read.all({ keys: JSON.stringify(missing) });
    const readAt = writes.seq;
    for (const row of read) {
      out.push(row);
      // A resource being written may change before its write ends (its transactions commit one by one).
      const marks = writeMarksOf(writes, row[1]);
      if (marks.busy > 0) continue;
      const bytes = ROW_OVERHEAD_BYTES + 2 * (row[1].length + row[2].length + row[6].length + row[7].length + row[8].length);
      // A row larger than a quarter of the budget would evict a quarter of everything held for one answer.
      if (bytes <= this.maxBytes / 4) this.held.set(principal, row[0], { row, marks, readAt }, bytes);
    }
    return out;
  }

  /** Drops chunk `key`'s row, of every principal. */
  forget(key: number): void {
    this.held.deleteEverywhere(key);
  }

  /** Drops everything held. */
  clear(): void {
    this.held.clear();
  }

  /** What is held (figures for tests): rows, bytes, the principals holding some, and how many reads went to SQLite. */
  get heldRows(): { rows: number; bytes: number; principals: number; reads: number } {
    const { entries, bytes, principals } = this.held.holdings;
    return { rows: entries, bytes, principals, reads: this.reads };
  }

  /** Drops everything held when another connection committed, or the write log started over, since it was read. */
  private sync(dataVersion: number): void {
    const resets = this.writes.resets;
    if (resets === this.resets && dataVersion === this.dataVersion) return;
    this.clear();
    this.resets = resets;
    this.dataVersion = dataVersion;
  }
}
