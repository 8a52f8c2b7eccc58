import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "../kit/sqlite-database.js";
import { forgetChunkRows } from "./chunk-row-cache.js";

/**
 * The rows and tokens `chunks_fts` holds per resource, as FTS5 counts them for BM25 (a row's tokens over
 * every column: its body's and its one `rid` token). Fts5TextBackend reads a scope's BM25 statistics here
 * instead of from the whole table (issue 24, finding 4), so they must never drift from the index: every
 * write of `chunks_fts` goes through KeywordRows, which moves the counters in the same statement sequence,
 * hence the same transaction (SQLite refuses triggers on FTS5's shadow tables, which would have been the
 * other way to keep them in step).
 */
export const KEYWORD_STATS_TABLE = "keyword_resource_stats";

/** One resource's share of the keyword index. */
export interface KeywordTotals {
  rows: number;
  tokens: number;
}

/** Reads one SQLite varint (as FTS5 writes its sizes) from `buf` at `pos`: [value, next position]. */
function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const b = buf[pos + i];
    v = v * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) return [v, pos + i + 1];
  }
  return [v * 256 + buf[pos + 8], pos + 9];
}

/** The sum of the varints of an FTS5 `docsize` blob: the row's tokens over every column. */
export function docsizeTokens(sz: Uint8Array): number {
  let total = 0;
  for (let pos = 0; pos < sz.length;) {
    const [v, next] = readVarint(sz, pos);
    total += v;
    pos = next;
  }
  return total;
}

/** FTS5's own table totals (its averages record): rows, and tokens over every column. */
export function fts5TableTotals(block: Uint8Array | undefined): KeywordTotals {
  if (!block || block.length === 0) return { rows: 0, tokens: 0 };
  const [rows, first] = readVarint(block, 0);
  let tokens = 0;
  for (let pos = first; pos < block.length;) {
    const [v, next] = readVarint(block, pos);
    tokens += v;
    pos = next;
  }
  return { rows, tokens };
}

/**
 * Writes of one connection's keyword rows by this process (committed or rolled back; every count only grows):
 * by resource token (`byResource`, see `keywordWrites`) and of every resource (`writes`, their sum), rows added
 * (`appended`: each under a chunk key above every key the table held, the chunk keys only growing), rows
 * rewritten in place (`rewritten`) and rows deleted (`deleted`, the journal of their keys).
 */
export interface KeywordLog {
  readonly byResource: Map<string, number>;
  writes: number;
  appended: number;
  rewritten: number;
  /** Keys of the rows deleted, in order; the first is deletion number `deletedBase` (see `deletionsSince`). */
  deleted: number[];
  deletedBase: number;
}

/** Deletions the journal keeps (`KeywordLog.deleted`); a reader further behind drops what it holds instead. */
const DELETION_JOURNAL_MAX = 1 << 16;

/**
 * The keys of the rows deleted since deletion number `since` (`deletionsCount` when read), or undefined when
 * the journal no longer reaches back that far.
 */
export function deletionsSince(log: KeywordLog, since: number): readonly number[] | undefined {
  if (since < log.deletedBase) return undefined;
  return log.deleted.slice(since - log.deletedBase);
}

/** How many rows `log` has recorded as deleted. */
export function deletionsCount(log: KeywordLog): number {
  return log.deletedBase + log.deleted.length;
}

const logByDb = new WeakMap<SqliteDatabase, KeywordLog>();

/**
 * `db`'s KeywordLog, live (callers other than KeywordRows read it, never write it). While `rewritten` stays
 * the same every row a reader saw that is not in the deletion journal since is still there with the same
 * text; while `appended` stays the same too, no row was added either (anything read from `chunks_fts` is
 * still what it holds, less the rows deleted since, as far as this connection's writes go: another
 * connection's commits are for `PRAGMA data_version` to tell). A deletion is journaled before its statement
 * runs: a reader finding a journaled row still there knows its transaction rolled back. Exact for the
 * server's connection, as `keywordWrites` is.
 */
export function keywordLog(db: SqliteDatabase): KeywordLog {
  let log = logByDb.get(db);
  if (!log) logByDb.set(db, (log = { byResource: new Map(), writes: 0, appended: 0, rewritten: 0, deleted: [], deletedBase: 0 }));
  return log;
}

/**
 * How many writes of `db`'s keyword rows of the resources `ridTokens` (their `resourceToken`s) this process
 * has made through KeywordRows (insert, replace or delete, committed or rolled back). It only grows, and grows
 * with every such write: anything read from `chunks_fts` or `keyword_resource_stats` about those resources
 * on `db` is still what the tables hold while it is the same. Exact for the server's connection: every write
 * of those tables goes through KeywordRows, and one process at a time writes a database (the data-directory
 * lock); another connection's commits are for `PRAGMA data_version` to tell.
 */
export function keywordWrites(db: SqliteDatabase, ridTokens: readonly string[]): number {
  const writes = logByDb.get(db)?.byResource;
  if (!writes) return 0;
  let n = 0;
  for (const t of ridTokens) n += writes.get(t) ?? 0;
  return n;
}

/**
 * The writer of `chunks_fts` (insert, replace, delete) that keeps `keyword_resource_stats` in step: each
 * call takes the row's token count from FTS5's own shadow tables (`chunks_fts_docsize`: what bm25() counts;
 * a row going away, its resource token from `chunks_fts_content` too) and moves that resource's counters.
 * Call it inside the transaction that writes the keyword row, as the document store does; a bulk write runs
 * in a `batch`, which moves each resource's counters once (an upload of single-chunk documents made one
 * counter statement per document before).
 */
export class KeywordRows {
  private readonly stmts: {
    insert: Statement<[number, string, string]>;
    replace: Statement<[number, string, string]>;
    delete: Statement<[number]>;
    row: Statement<[number], { rid: string; sz: Buffer }>;
    size: Statement<[number], Buffer>;
    add: Statement<[string, number, number]>;
    dropEmpty: Statement<[string]>;
  };

  private readonly log: KeywordLog;
  /** Within `batch`: the counters' moves so far, by resource token, not written yet. */
  private pending: Map<string, KeywordTotals> | undefined;

  constructor(private readonly db: SqliteDatabase) {
    migrateKeywordStats(db);
    this.log = keywordLog(db);
    this.stmts = {
      insert: db.prepare("INSERT INTO chunks_fts (rowid, body, rid) VALUES (?, ?, ?)"),
      replace: db.prepare("INSERT OR REPLACE INTO chunks_fts (rowid, body, rid) VALUES (?, ?, ?)"),
      delete: db.prepare("DELETE FROM chunks_fts WHERE rowid = ?"),
      row: db.prepare("SELECT c.c1 AS rid, d.sz FROM chunks_fts_content c JOIN chunks_fts_docsize d ON d.id = c.id WHERE c.id = ?"),
      size: db.prepare<[number], Buffer>("SELECT sz FROM chunks_fts_docsize WHERE id = ?").pluck(),
      add: db.prepare(
        `INSERT INTO ${KEYWORD_STATS_TABLE} (rid, rows, tokens) VALUES (?, ?, ?)
         ON CONFLICT (rid) DO UPDATE SET rows = rows + excluded.rows, tokens = tokens + excluded.tokens`,
      ),
      dropEmpty: db.prepare(`DELETE FROM ${KEYWORD_STATS_TABLE} WHERE rid = ? AND rows = 0`),
    };
  }

  /**
   * Adds the keyword row of chunk `rowid` (body `text`, resource token `rid`). Its resource's counters move at
   * once, or, within `batch`, when the batch ends (one statement a resource instead of one a row).
   */
  insert(rowid: number, text: string, rid: string): void {
    this.log.appended += 1;
    this.stmts.insert.run(rowid, text, rid);
    this.move(rid, 1, this.stmts.size.get(rowid)!);
  }

  /**
   * Runs `fn` (inside the transaction that writes its rows), its counter moves summed by resource and written
   * when it ends, whether it returns or throws: the counters then hold every row it wrote, in the same
   * transaction, which commits or rolls back both. Moves add up whatever their order, so the sums leave the
   * totals each row's own move would have. Nested, the outer batch writes.
   */
  batch<T>(fn: () => T): T {
    if (this.pending !== undefined) return fn();
    const pending = (this.pending = new Map<string, KeywordTotals>());
    let failed = false;
    try {
      return fn();
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      this.pending = undefined;
      try {
        for (const [rid, moved] of pending) this.write(rid, moved.rows, moved.tokens);
      } catch (err) {
        // A failure of fn's own goes out as it was; the transaction it fails rolls these writes back too.
        if (!failed) throw err;
      }
    }
  }

  /** Writes the keyword row of chunk `rowid` anew (its old copy, if any, replaced). */
  replace(rowid: number, text: string, rid: string): void {
    // A replaced row may sit below rows added since it was read: readers drop what they read, even where
    // nothing was there.
    this.log.rewritten += 1;
    forgetChunkRows(this.db, rowid);
    this.count(rowid, -1);
    this.stmts.replace.run(rowid, text, rid);
    this.move(rid, 1, this.stmts.size.get(rowid)!);
  }

  /** Deletes the keyword row of chunk `rowid`, if there is one; call it for every chunk deleted (see `forgetChunkRows`). */
  delete(rowid: number): void {
    // Every chunk deleted goes through here (a version past retention, an erasure, an unpublished stage
    // discarded): no copy of its text stays held, even when it has no keyword row.
    forgetChunkRows(this.db, rowid);
    if (!this.count(rowid, -1)) return;
    this.logDeletion(rowid);
    this.stmts.delete.run(rowid);
  }

  /** Records row `rowid`'s deletion in the journal (which starts over, further on, once full). */
  private logDeletion(rowid: number): void {
    const log = this.log;
    if (log.deleted.length >= DELETION_JOURNAL_MAX) {
      log.deletedBase += log.deleted.length;
      log.deleted = [];
    }
    log.deleted.push(rowid);
  }

  /** Moves the counters of row `rowid`'s resource by the row (`sign` 1 adds, -1 removes); false when there is no such row. */
  private count(rowid: number, sign: 1 | -1): boolean {
    const row = this.stmts.row.get(rowid);
    if (!row) return false;
    this.move(row.rid, sign, row.sz);
    return true;
  }

  /**
   * Moves resource `rid`'s counters by one row of docsize record `sz` (`sign` 1 adds, -1 removes), and logs the
   * write: at once, or, within `batch`, when the batch ends.
   */
  private move(rid: string, sign: 1 | -1, sz: Buffer): void {
    this.log.byResource.set(rid, (this.log.byResource.get(rid) ?? 0) + 1);
    this.log.writes += 1;
    const tokens = sign * docsizeTokens(sz);
    const pending = this.pending;
    if (pending === undefined) return this.write(rid, sign, tokens);
    const moved = pending.get(rid);
    if (moved === undefined) pending.set(rid, { rows: sign, tokens });
    else {
      moved.rows += sign;
      moved.tokens += tokens;
    }
  }

  /** Adds `rows` and `tokens` (either may be negative) to resource `rid`'s counters. */
  private write(rid: string, rows: number, tokens: number): void {
    this.stmts.add.run(rid, rows, tokens);
    // A resource whose last row goes leaves no counter row behind (an erased resource's id stays nowhere);
    // only a net removal can take a resource to none.
    if (rows < 0) this.stmts.dropEmpty.run(rid);
  }
}

/**
 * Creates `keyword_resource_stats` and fills it from the keyword rows already held (a database made before
 * the table existed), in one transaction, so a crash leaves either no table (filled at the next open) or a
 * filled one.
 */
function migrateKeywordStats(db: SqliteDatabase): void {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(KEYWORD_STATS_TABLE);
  if (exists) return;
  db.transaction(() => {
    db.exec(`CREATE TABLE ${KEYWORD_STATS_TABLE} (rid TEXT PRIMARY KEY, rows INTEGER NOT NULL, tokens INTEGER NOT NULL) WITHOUT ROWID`);
    const totals = new Map<string, KeywordTotals>();
    const rows = db
      .prepare<[], [string, Buffer]>("SELECT c.c1, d.sz FROM chunks_fts_content c JOIN chunks_fts_docsize d ON d.id = c.id")
      .raw(true);
    for (const [rid, sz] of rows.iterate()) {
      let t = totals.get(rid);
      if (!t) totals.set(rid, (t = { rows: 0, tokens: 0 }));
      t.rows += 1;
      t.tokens += docsizeTokens(sz);
    }
    const insert = db.prepare<[string, number, number]>(`INSERT INTO ${KEYWORD_STATS_TABLE} (rid, rows, tokens) VALUES (?, ?, ?)`);
    for (const [rid, t] of totals) insert.run(rid, t.rows, t.tokens);
  }).immediate();
}
