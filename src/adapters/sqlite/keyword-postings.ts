import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "../kit/sqlite-database.js";
import { quoteFts5 } from "./fts5-match-query.js";
import { FairShareCache } from "../kit/fair-share-cache.js";
import { deletionsCount, deletionsSince, keywordLog, type KeywordTotals } from "./keyword-rows.js";

/**
 * The postings held at most, in bytes (16 a posting: its row, the term's count there and the row's length,
 * with the term's text): whatever the tenants search, the cache never holds more memory than this.
 */
export const KEYWORD_POSTINGS_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Rows between a ranking's first and last row up to which it scores in a dense array (8 bytes and 4 a row,
 * allocated per search past POOLED_SPAN); a wider span ranks in FTS5.
 */
export const KEYWORD_POSTINGS_MAX_SPAN = 1 << 22;

/** Spans up to which the scoring arrays are kept from one search to the next (~0.8 MB). */
const POOLED_SPAN = 1 << 16;

/** Rows tied with the last one kept that a ranking keeps too, at most, beyond its limit (as acms_topk does). */
function tieRoom(limit: number): number {
  return limit + 16;
}

/**
 * Rows deleted at once (between two searches) up to which what is held stays held, each list marking them
 * when a search next takes it; past that (an erasure) everything held is dropped.
 */
const DELETIONS_MARKED_MAX = 4096;

/**
 * One term's postings among the keyword rows from `lo` to `hi`, ascending by row: the row, the term's
 * instances and the row's length (-1: the row was deleted since it was read, see `markDeleted`). `hi` is Infinity
 * when they run to the end of the index, as it stood at `appended` (rows added since come after every row
 * held).
 */
interface Postings {
  rows: Float64Array;
  tf: Int32Array;
  len: Int32Array;
  lo: number;
  hi: number;
  /** `KeywordLog.appended` when last brought up to date. */
  appended: number;
  /** Rows marked deleted (length -1), dropped from the arrays once they are a quarter of them. */
  dead: number;
  /** The keyword log's deletions (`deletionsCount`) this list has marked. */
  deletions: number;
  bytes: number;
}

/** Which rows a ranking scores: those from `first` to `last` whose bit is set (every one, without `bits`). */
export interface PostingScope {
  first: number;
  last: number;
  /** Bit i (byte i >> 3, bit i & 7) set when row first + i is in the scope. */
  bits: Uint8Array | undefined;
}

/** A ranking's best rows, best first (rank: minus BM25 relevance), as the acms_topk pass gives them. */
export interface PostingRanking {
  /** Each term's rows within the scope. */
  phraseRows: number[];
  rows: Array<[rowid: number, rank: number]>;
  /** Every row of the scope matching a term is among `rows`. */
  complete: boolean;
  /** Every row ranked exactly as the last of `rows` is among them. */
  tiesWhole: boolean;
}

/**
 * The keyword index's postings held in memory term by term, and a ranking over them that costs a few
 * operations per posting within the scope instead of FTS5's walk (its OR of the terms' doclists, an
 * auxiliary-function call and a position walk per row): whole-index and large-scope searches with long
 * queries are where FTS5 spends its time, and those rows are the ones held here (a common term's postings
 * are read once, not once per search). Scores are those of the acms_topk pass bit for bit: the same
 * statistics (the scope's rows, tokens and each term's rows within the scope), the same formula and the
 * same order of additions (term by term, in query order, each row's sum starting at 0), IDF from the
 * extension itself (`acms_idf`).
 *
 * A term's postings are read from FTS5 (`acms_postings`: rows, instances, lengths) within the span of rows
 * a search ranks, the first time it is searched there: about what FTS5's own walk of that span costs once,
 * and a wider span reads only the rows it adds. Postings read to the end of the index follow it as it
 * grows: rows added since (KeywordLog.appended) are read on the next search, after the last row held (chunk
 * keys only grow). A row deleted since (a document's version past retention, an erasure) is marked in a list
 * when a search next takes it, and skipped, so one tenant updating its documents leaves every other tenant's
 * postings held (each list pays for the rows deleted within it, once). A row rewritten in place (a rebuild),
 * a deletion that did not commit, more deletions at once than DELETIONS_MARKED_MAX, or another connection's
 * commit, drops them all.
 *
 * Each principal holds its own (the budget, KEYWORD_POSTINGS_CACHE_BYTES, is shared): whether a word is held
 * must not say whom it was searched by. Past the budget the principal holding the most gives up its least
 * recently used word first, so a principal searching many words evicts its own, never another's that holds
 * less. A term whose postings alone would take more than a quarter of the budget is not held: the search
 * ranks in FTS5.
 */
export class KeywordPostings {
  /** Each principal's postings by word (FairShareCache: least recently used evicted first, from the principal holding the most). */
  private readonly held: FairShareCache<string, Postings>;
  /** Terms found too large to hold (by principal), until the index changes. */
  private readonly tooLarge = new Set<string>();
  private rewritten = -1;
  /** Deletions of the keyword log taken into account (`deletionsCount`). */
  private deletions = 0;
  private dataVersion = -1;
  private reads = 0;
  private readonly fill: Statement<{ match: string; from: number; to: number }, Buffer | null>;
  private readonly idf: Statement<[number, number], number>;
  private readonly stillThere: Statement<[string], number>;
  private acc = new Float64Array(0);
  private touched = new Int32Array(0);

  /** `db` has the acms_fts5 extension loaded; `maxBytes`: see KEYWORD_POSTINGS_CACHE_BYTES (tests lower it). */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly maxBytes = KEYWORD_POSTINGS_CACHE_BYTES,
  ) {
    this.held = new FairShareCache(maxBytes);
    this.fill = db
      .prepare<{ match: string; from: number; to: number }, Buffer | null>(
        `SELECT acms_postings(k, tf, 'chunks_fts') FROM (SELECT f.rowid AS k, acms_tf(chunks_fts, 1) AS tf FROM chunks_fts f
         WHERE chunks_fts MATCH @match AND f.rowid BETWEEN @from AND @to LIMIT -1)`,
      )
      .pluck();
    this.idf = db.prepare<[number, number], number>("SELECT acms_idf(?, ?)").pluck();
    this.stillThere = db
      .prepare<[string], number>("SELECT count(*) FROM chunks_fts_docsize WHERE id IN (SELECT value FROM json_each(?))")
      .pluck();
  }

  /**
   * The best `limit` rows of `scope` for the terms `words` (each a query phrase, in query order) with the
   * scope's BM25 totals, and the rest of a tie at the cut; undefined when a term's postings are too large to
   * hold or the scope's rows span more than KEYWORD_POSTINGS_MAX_SPAN (rank in FTS5 then). What is held is
   * held for `principal` (the view's): one principal's searches never make another's faster, so how long a
   * search takes tells no one which words others searched. `dataVersion`: the connection's `PRAGMA
   * data_version` as the search read it (the caller reads it anyway, for its own caches).
   */
  rank(
    principal: string,
    words: readonly string[],
    scope: PostingScope,
    totals: KeywordTotals,
    limit: number,
    dataVersion: number,
  ): PostingRanking | undefined {
    this.sync(dataVersion);
    const lists: Postings[] = [];
    for (const w of words) {
      const p = this.postings(principal, w, scope.first, scope.bits === undefined ? Infinity : scope.last);
      if (p === undefined) return undefined;
      lists.push(p);
    }
    // The rows scored: the scope's (the whole index's: those from the terms' first row to their last).
    let first = scope.first;
    let last = scope.last;
    if (scope.bits === undefined) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const p of lists) {
        if (p.rows.length === 0) continue;
        lo = Math.min(lo, p.rows[0]);
        hi = Math.max(hi, p.rows[p.rows.length - 1]);
      }
      first = Math.max(first, lo);
      last = Math.min(last, hi);
    }
    const phraseRows = new Array<number>(words.length).fill(0);
    if (!(first <= last)) return { phraseRows, rows: [], complete: true, tiesWhole: true };
    const span = last - first + 1;
    if (span > KEYWORD_POSTINGS_MAX_SPAN) return undefined;
    const { acc, touched } = this.scratch(span);
    const bits = scope.bits;
    const avgdl = totals.tokens / totals.rows;
    const k1 = 1.2;
    const b = 0.75;
    let n = 0;
    try {
      for (let i = 0; i < lists.length; i++) {
        const { rows, tf, len } = lists[i];
        const from = lowerBound(rows, first);
        const to = lowerBound(rows, last + 1);
        const anyDead = lists[i].dead > 0;
        let df = 0;
        if (bits === undefined && !anyDead) df = to - from;
        else
          for (let j = from; j < to; j++) {
            const o = rows[j] - first;
            if (bits !== undefined && (bits[o >> 3] & (1 << (o & 7))) === 0) continue;
            if (len[j] >= 0) df++;
          }
        phraseRows[i] = df;
        if (df === 0) continue;
        const idf = this.idf.get(totals.rows, df)!;
        for (let j = from; j < to; j++) {
          const o = rows[j] - first;
          if (bits !== undefined && (bits[o >> 3] & (1 << (o & 7))) === 0) continue;
          if (anyDead && len[j] < 0) continue;
          if (acc[o] === 0) touched[n++] = o;
          // acms_fts5's acmsTfFactor, operation for operation.
          const f = tf[j];
          acc[o] += idf * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + (b * len[j]) / avgdl)));
        }
      }
      return { phraseRows, ...select(acc, touched, n, first, limit) };
    } finally {
      for (let i = 0; i < n; i++) acc[touched[i]] = 0;
    }
  }

  /** The postings held (figures for tests): terms, bytes, and how many times postings were read from FTS5. */
  get heldPostings(): { terms: number; bytes: number; reads: number } {
    const { entries, bytes } = this.held.holdings;
    return { terms: entries, bytes, reads: this.reads };
  }

  /**
   * Brings what is held up to the index as `dataVersion` finds it: rows deleted since are left for each list
   * to mark when taken (`markDeleted`); everything is dropped when a row was rewritten, another connection
   * committed, the deletions are too many, or one of them did not commit (its row is still there).
   */
  private sync(version: number): void {
    const log = keywordLog(this.db);
    const count = deletionsCount(log);
    if (log.rewritten === this.rewritten && version === this.dataVersion && count === this.deletions) return;
    const deleted = deletionsSince(log, this.deletions);
    const keep =
      log.rewritten === this.rewritten &&
      version === this.dataVersion &&
      deleted !== undefined &&
      (this.held.holdings.entries === 0 || (deleted.length <= DELETIONS_MARKED_MAX && this.stillThere.get(JSON.stringify(deleted))! === 0));
    if (!keep) {
      this.held.clear();
      this.tooLarge.clear();
    }
    this.rewritten = log.rewritten;
    this.dataVersion = version;
    this.deletions = count;
  }

  /**
   * Term `w`'s postings from row `from` to row `to` (Infinity: to the end of the index) at least, read or
   * brought up to date (the most recently used then), as `principal` holds them; undefined when too large to
   * hold. Only the rows not held yet are read: a scope's span the first time, rows added since, or the rows a
   * wider scope adds.
   */
  private postings(principal: string, w: string, from: number, to: number): Postings | undefined {
    const key = `${principal}\u0000${w}`;
    if (this.tooLarge.has(key)) return undefined;
    const appended = keywordLog(this.db).appended;
    let p = this.held.take(principal, w);
    if (p !== undefined && p.deletions !== this.deletions && !markDeleted(p, this.db, this.deletions)) p = undefined;
    if (p !== undefined) {
      if (p.hi === Infinity && p.appended !== appended) {
        // Rows added since come after every row held (or, with none held, after the first row asked for).
        const after = p.rows.length > 0 ? p.rows[p.rows.length - 1] + 1 : p.lo;
        p = joined(p, this.read(w, after, Infinity), p.lo, Infinity, appended, w);
      }
      if (from < p.lo) p = joined(this.read(w, from, p.lo - 1), p, from, p.hi, appended, w);
      if (to > p.hi) p = joined(p, this.read(w, p.hi + 1, to), p.lo, to, appended, w);
    } else {
      p = joined(this.read(w, from, to), undefined, from, to, appended, w);
    }
    // Marked up to every deletion checked, or read since: FTS5 held none of them.
    p.deletions = this.deletions;
    if (p.dead * 4 > p.rows.length) p = alive(p, w);
    if (p.bytes > this.maxBytes / 4) {
      this.tooLarge.add(key);
      return undefined;
    }
    this.held.set(principal, w, p, p.bytes);
    return p;
  }

  /** Term `w`'s postings from row `from` to row `to` (Infinity: every row after `from`), from FTS5. */
  private read(w: string, from: number, to: number): Postings | undefined {
    this.reads += 1;
    const blob = this.fill.get({ match: `body : ${quoteFts5(w)}`, from, to: to === Infinity ? Number.MAX_SAFE_INTEGER : to });
    if (blob === null || blob === undefined) return undefined;
    const n = blob.length / 16;
    // Copied into an aligned buffer: the blob's own may start anywhere.
    const own = new ArrayBuffer(blob.length);
    new Uint8Array(own).set(blob);
    return {
      rows: new Float64Array(own, 0, n),
      tf: new Int32Array(own, 8 * n, n),
      len: new Int32Array(own, 12 * n, n),
      lo: from,
      hi: to,
      appended: 0,
      dead: 0,
      deletions: this.deletions,
      bytes: 0,
    };
  }

  /** Scoring arrays of at least `span` slots, zeroed (kept between searches up to POOLED_SPAN). */
  private scratch(span: number): { acc: Float64Array; touched: Int32Array } {
    if (span > POOLED_SPAN) return { acc: new Float64Array(span), touched: new Int32Array(span) };
    if (this.acc.length < span) {
      this.acc = new Float64Array(POOLED_SPAN);
      this.touched = new Int32Array(POOLED_SPAN);
    }
    return { acc: this.acc, touched: this.touched };
  }
}

/** The postings `a` then `b` (rows ascending across them; either may be missing) as those from `lo` to `hi` as of `appended`. */
function joined(a: Postings | undefined, b: Postings | undefined, lo: number, hi: number, appended: number, w: string): Postings {
  let out: Postings;
  if (a !== undefined && b !== undefined) {
    const n = a.rows.length + b.rows.length;
    const own = new ArrayBuffer(16 * n);
    const rows = new Float64Array(own, 0, n);
    const tf = new Int32Array(own, 8 * n, n);
    const len = new Int32Array(own, 12 * n, n);
    rows.set(a.rows);
    rows.set(b.rows, a.rows.length);
    tf.set(a.tf);
    tf.set(b.tf, a.rows.length);
    len.set(a.len);
    len.set(b.len, a.rows.length);
    out = { rows, tf, len, lo, hi, appended, dead: a.dead + b.dead, deletions: 0, bytes: 0 };
  } else {
    const one = a ?? b;
    out = one
      ? { ...one }
      : { rows: new Float64Array(0), tf: new Int32Array(0), len: new Int32Array(0), lo, hi, appended, dead: 0, deletions: 0, bytes: 0 };
  }
  out.lo = lo;
  out.hi = hi;
  out.appended = appended;
  out.bytes = 16 * out.rows.length + 2 * w.length + 128;
  return out;
}

/** `p` without its rows marked deleted. */
function alive(p: Postings, w: string): Postings {
  const n = p.rows.length - p.dead;
  const own = new ArrayBuffer(16 * n);
  const rows = new Float64Array(own, 0, n);
  const tf = new Int32Array(own, 8 * n, n);
  const len = new Int32Array(own, 12 * n, n);
  let k = 0;
  for (let j = 0; j < p.rows.length; j++) {
    if (p.len[j] < 0) continue;
    rows[k] = p.rows[j];
    tf[k] = p.tf[j];
    len[k] = p.len[j];
    k++;
  }
  return { rows, tf, len, lo: p.lo, hi: p.hi, appended: p.appended, dead: 0, deletions: p.deletions, bytes: 16 * n + 2 * w.length + 128 };
}

/**
 * Marks in `p` the rows of `db`'s keyword log deleted since `p` last marked them, up to deletion `upTo` (every
 * one the posting cache has checked); false when the log no longer reaches back that far (drop `p`).
 */
function markDeleted(p: Postings, db: SqliteDatabase, upTo: number): boolean {
  const deleted = deletionsSince(keywordLog(db), p.deletions);
  if (deleted === undefined) return false;
  const n = p.rows.length;
  if (n > 0) {
    const lo = p.rows[0];
    const hi = p.rows[n - 1];
    for (let i = 0; i < deleted.length && p.deletions + i < upTo; i++) {
      const row = deleted[i];
      if (row < lo || row > hi) continue;
      const j = lowerBound(p.rows, row);
      if (p.rows[j] === row && p.len[j] >= 0) {
        p.len[j] = -1;
        p.dead += 1;
      }
    }
  }
  p.deletions = upTo;
  return true;
}

/** The first index of ascending `a` whose value is at least `v`. */
function lowerBound(a: Float64Array, v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The best `limit` of the `n` scored slots `touched` (scores in `acc`, slot o being row first + o), best
 * first (greater score, then lesser row), with every row tied with the last kept when they fit in
 * tieRoom(limit), as acms_topk keeps them.
 */
function select(
  acc: Float64Array,
  touched: Int32Array,
  n: number,
  first: number,
  limit: number,
): { rows: Array<[number, number]>; complete: boolean; tiesWhole: boolean } {
  const rows: Array<[number, number]> = [];
  if (n <= limit) {
    for (let i = 0; i < n; i++) rows.push([first + touched[i], -1.0 * acc[touched[i]]]);
    rows.sort(byRankThenRow);
    return { rows, complete: true, tiesWhole: true };
  }
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) scores[i] = acc[touched[i]];
  const cut = kthLargest(scores, limit);
  let better = 0;
  let ties = 0;
  for (let i = 0; i < n; i++) {
    const s = acc[touched[i]];
    if (s > cut) better++;
    else if (s === cut) ties++;
  }
  const whole = ties <= tieRoom(limit);
  const tied: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    const s = acc[touched[i]];
    if (s > cut) rows.push([first + touched[i], -1.0 * s]);
    else if (s === cut) tied.push([first + touched[i], -1.0 * s]);
  }
  tied.sort(byRankThenRow);
  // Too many ties: the least rows of the tie up to the limit, the tie not all there.
  rows.push(...(whole ? tied : tied.slice(0, limit - better)));
  rows.sort(byRankThenRow);
  return { rows, complete: false, tiesWhole: whole };
}

function byRankThenRow(a: [number, number], b: [number, number]): number {
  return a[1] - b[1] || a[0] - b[0];
}

/** The k-th largest value of `a` (1-based), reordering `a` (Hoare's selection). */
function kthLargest(a: Float64Array, k: number): number {
  const want = k - 1;
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else break;
  }
  return a[want];
}
