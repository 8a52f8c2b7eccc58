import type { Statement } from "better-sqlite3";
import { compareBinary } from "../../domain/binary-order.js";
import { normaliseBm25 } from "../../domain/bm25-normalise.js";
import { supersededCutoff } from "../../domain/temporal-filter.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { TemporalScope } from "../../domain/scope.js";
import type { ChunkRecord } from "../../ports/document-store.js";
import type { TextBackend, TextHit, TextSearchOptions } from "../../ports/text-backend.js";
import { matchAnyTerm, queryTerms, quoteFts5 } from "./fts5-match-query.js";
import { resourceToken } from "./sqlite-document-store.js";
import type { SqliteDatabase } from "../kit/sqlite-database.js";
import { requireAcmsFts5 } from "./acms-fts5-extension.js";
import { fts5TableTotals, KEYWORD_STATS_TABLE, keywordLog, keywordWrites, type KeywordTotals } from "./keyword-rows.js";
import { KEYWORD_POSTINGS_CACHE_BYTES, KEYWORD_POSTINGS_MAX_SPAN, KeywordPostings, type PostingScope } from "./keyword-postings.js";
import { CHUNK_ROW_CACHE_BYTES, ChunkRowCache, metadataOf, type VisibleChunkRow } from "./chunk-row-cache.js";
import { FairShareCache } from "../kit/fair-share-cache.js";

/**
 * Scopes of at most this many resources (past 32, in an index large enough: RID_MATCH_ROWS_PER_RESOURCE) are
 * also pushed into the FTS5 MATCH itself (`rid : (...)`), so FTS5 intersects the query's doclists with the
 * resources' and reads only in-scope rows; larger scopes join each matched row to its chunk and test
 * `resource_id IN (...)`, which beats an OR of thousands of doclists.
 * Measured on 100,000 chunks in 2,000 resources (three-word queries, a pass over the matches): the MATCH form
 * took 7, 17 and 84 ms at 50, 200 and 400 resources, the join 43, 32 and 52.
 */
export const RID_MATCH_MAX_RESOURCES = 256;

/**
 * Past ONE_STATEMENT_RID_MATCH_MAX_RESOURCES resources the MATCH names them only in an index of at least this
 * many rows per resource named: each named resource is a doclist FTS5 opens in every index segment, a fixed
 * cost, while the join costs a look-up per matched row of the whole index. Measured at 100 resources: 5,000
 * rows (three-word queries) the join 1.1 ms against 7.5; 18,000 rows (long queries) the MATCH 5.9 against 11.9;
 * 100,000 rows the MATCH ~10 against ~38.
 */
export const RID_MATCH_ROWS_PER_RESOURCE = 100;

/**
 * The one-statement form's limit (`rankedSearchSql` with `scopedMatch`'s default): the ranking the adapter ran
 * before issue 29, kept as the benches' baseline, named the scope's resources in its MATCH up to this many.
 * The adapter names them up to this many in any index (and past it, see RID_MATCH_ROWS_PER_RESOURCE).
 */
export const ONE_STATEMENT_RID_MATCH_MAX_RESOURCES = 32;

/** Rows ranked by the first run of a search beyond max_results; later runs double (each re-runs the ranking, so doubling keeps the re-runs to a logarithmic count). */
const FIRST_PAGE_SLACK = 16;
const MAX_PAGE = 65_536;

/** One row of the ranking statement (raw mode): the chunk's key and its FTS5 `bm25()` rank (lower is better). */
type RankRow = [chunkKey: number, bm25Rank: number];

/** One row of `rankedSearchSql` (raw mode), in column order. */
type PagedRow = [
  chunkKey: number,
  resourceId: string,
  path: string,
  chunkIndex: number,
  supersededAt: number | null,
  ukoUri: string,
  bm25Rank: number,
  docKey: number,
  text: string,
  metadata: string,
];

function temporalCondition(temporal: TemporalScope): string {
  if (temporal === "all") return "1";
  if (temporal === "recent") return "(d.superseded_at IS NULL OR d.superseded_at >= @cutoff)";
  return "d.superseded_at IS NULL";
}

/**
 * The ranked SQL of a scoped keyword search: FTS5 `bm25()` over the `body` column only (the `rid` column
 * weighs 0, so a scope filter never changes a score), joined to the chunk rows and restricted to the
 * scope's resources and visible versions in SQL. Ordered by rank, then UKO URI, then live before
 * superseded, so the first row of each URI is its best version. Each row carries the chunk's text and
 * its document's metadata, so a search is one statement, not a ranking and then a look-up. When the
 * MATCH itself names the scope's resources (`ridInMatch`, small scopes) the resource list is not
 * checked a second time. Documents of an upload not yet published are never ranked (the `visible_documents` view of SqliteDocumentStore).
 * LIMIT and OFFSET are expressions, not bare parameters: SQLite reads a bare bound LIMIT while planning,
 * so every run with new bindings re-prepared the whole statement, view included (measured: about 16% of
 * the statement's instructions). Fts5TextBackend reads it page by page only for the rare search whose filters
 * drop more than MAX_PAGE ranked rows; the benches keep it as their baseline (the one-statement form the
 * adapter ran before it ranked first and hydrated after).
 */
export function rankedSearchSql(temporal: TemporalScope, ridInMatch = false, scopedPhrases?: number): string {
  return `SELECT c.chunk_key, c.resource_id, c.path, c.chunk_index, d.superseded_at,
      'uko://' || c.resource_id || '/' || c.path || '#' || c.chunk_index AS uko_uri,
      ${scoreSql(scopedPhrases)} AS bm25_rank, c.doc_key, c.text, d.metadata
    FROM chunks_fts JOIN chunks c ON c.chunk_key = chunks_fts.rowid JOIN visible_documents d ON d.doc_key = c.doc_key
    WHERE chunks_fts MATCH @match
      ${ridInMatch ? "" : "AND c.resource_id IN (SELECT value FROM json_each(@rids))"}
      AND ${temporalCondition(temporal)}
    ORDER BY bm25_rank, uko_uri, d.superseded_at IS NOT NULL, d.superseded_at DESC
    LIMIT (@limit + 0) OFFSET (@offset + 0)`;
}

/**
 * The BM25 rank expression (lower is better): FTS5's `bm25()` over the body column (the `rid` column weighs
 * 0, so a scope filter never changes a score) with the whole table's statistics when `scopedPhrases` is
 * undefined; else the acms_fts5 extension's `acms_bm25`, the same formula with the scope's statistics
 * bound as `@rows`, `@tokens` and `@h0`..`@h{k-1}` (the rows of the scope holding each of the query's k
 * terms; see Fts5TextBackend).
 */
export function scoreSql(scopedPhrases?: number): string {
  if (scopedPhrases === undefined) return "bm25(chunks_fts, 1.0, 0.0)";
  const hits = Array.from({ length: scopedPhrases }, (_, i) => `, @h${i}`).join("");
  return `acms_bm25(chunks_fts, @rows, @tokens${hits})`;
}

/** The bound values `scoreSql(k)` reads: the scope's rows, tokens and per-term row counts. */
export function scoreParams(stats: KeywordTotals, phraseRows: readonly number[]): Record<string, number> {
  const params: Record<string, number> = { rows: stats.rows, tokens: stats.tokens };
  phraseRows.forEach((n, i) => (params[`h${i}`] = n));
  return params;
}

/**
 * The MATCH expression for a query's terms within a scope (undefined when the query has no terms): phrases
 * 0..terms-1 of the expression are the query's terms; the scope's `rid` phrases, when the MATCH names them
 * (`ridInMatch`; by default as the one-statement form did), come after.
 */
export function scopedMatch(
  query: string,
  resourceIds: readonly string[],
  ridInMatch = resourceIds.length <= ONE_STATEMENT_RID_MATCH_MAX_RESOURCES,
): string | undefined {
  return matchOfTerms(queryTerms(query), resourceIds, ridInMatch);
}

/** `scopedMatch` of terms already taken from the query (`queryTerms`). */
function matchOfTerms(words: readonly string[], resourceIds: readonly string[], ridInMatch: boolean): string | undefined {
  const terms = matchAnyTerm("body", words);
  if (terms === undefined || !ridInMatch) return terms;
  return `${terms} AND ${ridFilter(resourceIds)}`;
}

/** The MATCH filter on the scope's resources: one unstemmed `rid` token per resource. */
function ridFilter(resourceIds: readonly string[]): string {
  return `rid : (${resourceIds.map((id) => quoteFts5(resourceToken(id))).join(" OR ")})`;
}

/**
 * The ranking statement: FTS5 alone, no join, when the MATCH names the scope's resources (small scopes);
 * larger scopes read each matched row's resource from its chunk row (an integer-key look-up) and test it
 * against the scope's set, so the scope stays inside the ranking, never a filter of a global top-k. No
 * visibility, version or URI per matched row: those are read for the ranked rows only (`HYDRATE_SQL`).
 */
function rankSql(ridInMatch: boolean, scopedPhrases?: number): string {
  return ridInMatch
    ? `SELECT rowid, ${scoreSql(scopedPhrases)} AS r FROM chunks_fts WHERE chunks_fts MATCH @match ORDER BY r LIMIT (@limit + 0)`
    : `SELECT f.rowid, ${scoreSql(scopedPhrases)} AS r FROM chunks_fts f JOIN chunks c ON c.chunk_key = f.rowid
       WHERE chunks_fts MATCH @match AND c.resource_id IN (SELECT value FROM json_each(@rids))
       ORDER BY r LIMIT (@limit + 0)`;
}

/**
 * One pass over the scope's matched rows that counts the rows holding each term and ranks them with those
 * counts (the acms_fts5 aggregate `acms_topk` over `acms_tf`, the row's term counts): its blob holds each
 * term's row count, then the best `@limit` rows with their ranks (see `readTopK`). Every row of the scope's
 * resources counts, whatever its version or visibility, as the row and token counts do (what FTS5 counts
 * for bm25() over a table holding only those resources); only the ranked rows are then read for visibility
 * and versions. Scopes of up to RID_MATCH_MAX_RESOURCES name their resources in the MATCH; larger ones
 * test each matched row's chunk (so a keyword row no chunk backs, which only a crash of an older version
 * could leave and a full reindex removes, is in their row and token totals but not in their term counts).
 * Past `@cap` matched rows the aggregate stops keeping rows and gives the counts alone, and the ranking runs
 * as its own statement (`rankSql`), so its memory stays bounded.
 */
function topKSql(filter: ScopeFilter): string {
  // FTS5 resolves its auxiliary functions only where a column of the table is a plain column reference,
  // which an aggregate's argument is not: the rows come from a subquery its LIMIT keeps from being flattened.
  const rows =
    filter === "match"
      ? `SELECT f.rowid AS k, acms_tf(chunks_fts, @terms) AS tf FROM chunks_fts f WHERE chunks_fts MATCH @match`
      : filter === "keys"
        ? `SELECT f.rowid AS k, acms_tf(chunks_fts, @terms, @keys) AS tf FROM chunks_fts f
           WHERE chunks_fts MATCH @match AND f.rowid BETWEEN @first AND @last`
        : `SELECT f.rowid AS k, acms_tf(chunks_fts, @terms) AS tf FROM chunks_fts f JOIN chunks c ON c.chunk_key = f.rowid
       WHERE chunks_fts MATCH @match AND c.resource_id IN (SELECT value FROM json_each(@rids))`;
  return `SELECT acms_topk(k, tf, @terms, @limit, @cap, @rows, @tokens, 'chunks_fts') FROM (${rows} LIMIT -1)`;
}

/**
 * A scope's chunk keys: ascending as a blob for acms_tf (64-bit, native order), the first and the last (an
 * empty scope: 1 and 0), and as bits from the first to the last once the posting cache ranks with them.
 */
interface ScopeKeys {
  blob: Buffer;
  first: bigint;
  last: bigint;
  bits?: Uint8Array;
}

/**
 * What a scope's held keys count against SCOPE_KEYS_CACHE_BYTES: their memory with their resource list's, and
 * never less than an equal share of the budget among SCOPE_KEYS_CACHE_VIEWS scopes (so no more scopes than
 * that are held, however small).
 */
function heldKeysBytes(ids: string, keys: ScopeKeys): number {
  return Math.max(keys.blob.length + (keys.bits?.length ?? 0) + ids.length, SCOPE_KEYS_CACHE_BYTES / SCOPE_KEYS_CACHE_VIEWS);
}

/** The whole index as a posting scope. */
const WHOLE_INDEX: PostingScope = { first: 0, last: Number.MAX_SAFE_INTEGER, bits: undefined };

/**
 * Rows between a scope's first and last key, per row of the scope, up to which it ranks on the posting cache:
 * the cache tests each posting of the span against the scope (~1 ns), FTS5 spends ~100 ns a matched row and
 * term, and where the MATCH names a sparse scope's resources it reads only theirs.
 */
const POSTINGS_MAX_SPAN_PER_ROW = 16;

/**
 * How the ranking pass keeps to the scope: the MATCH names its resources (`match`: small scopes, or none for
 * a scope holding every row), `acms_tf` skips the rows not among the scope's chunk keys (`keys`: larger
 * scopes, the keys read once per keyword write), or each matched row's chunk is joined (`join`: scopes past
 * SCOPE_KEYS_MAX_ROWS).
 */
type ScopeFilter = "match" | "keys" | "join";

/**
 * Rows of a scope up to which the ranking pass filters by the scope's chunk keys (8 bytes each, kept per
 * resource list until a keyword write of one of its resources) rather than a join: the join looked up each
 * matched row's chunk (1,000 of 2,000 resources, 10,000 rows, long queries: 10.6 ms against 7.7 with the keys).
 */
export const SCOPE_KEYS_MAX_ROWS = 1_000_000;

/**
 * The chunk keys held at most, in bytes (with the resource lists they are held for) and in scopes: whatever
 * scopes the tenants search, the keys never hold more memory than this. Each principal holds its own, past
 * the budget the principal holding the most gives up its least recently used first (FairShareCache).
 */
export const SCOPE_KEYS_CACHE_BYTES = 64 * 1024 * 1024;
export const SCOPE_KEYS_CACHE_VIEWS = 1024;

/** A ranking pass's rows, best first, and what they hold. */
interface RankedPage {
  rows: RankRow[];
  /** Every row of the scope matching the query is among `rows`. */
  complete: boolean;
  /** Every row ranked exactly as the last of `rows` is among them (so a tie at the cut is whole). */
  tiesWhole: boolean;
}

/**
 * `acms_topk`'s blob (native byte order, little-endian on every platform Node builds for): int32 k, k
 * doubles (each term's row count), int32 m (the rows ranked, -1 when past the cap), int32 flags (bit 0: the
 * tie at the cut is whole, bit 1: every row is there) and m pairs of int64 rowid and double rank, best first.
 */
export function readTopK(blob: Buffer | null, terms: number): { phraseRows: number[]; ranked: RankedPage | undefined } {
  if (blob === null) return { phraseRows: new Array<number>(terms).fill(0), ranked: { rows: [], complete: true, tiesWhole: true } };
  const k = blob.readInt32LE(0);
  if (k !== terms) throw new Error(`acms_topk answered ${k} terms for ${terms}`);
  const phraseRows: number[] = [];
  let off = 4;
  for (let i = 0; i < k; i++, off += 8) phraseRows.push(blob.readDoubleLE(off));
  const m = blob.readInt32LE(off);
  const flags = blob.readInt32LE(off + 4);
  off += 8;
  if (m < 0) return { phraseRows, ranked: undefined };
  const rows: RankRow[] = [];
  for (let i = 0; i < m; i++, off += 16) rows.push([Number(blob.readBigInt64LE(off)), blob.readDoubleLE(off + 8)]);
  return { phraseRows, ranked: { rows, complete: (flags & 2) !== 0, tiesWhole: (flags & 1) !== 0 } };
}

/** A view's resource tokens (as a list and as JSON), its resource ids (JSON), and its resources' keyword writes when last summed. */
interface ViewTokens {
  tokens: string;
  ids: string;
  tokenList: string[];
  /** KeywordLog.writes when `writes` was summed (-1: never). */
  writesAt: number;
  writes: number;
}

/** A ranked, visible row with what ordering needs. */
interface Candidate {
  row: VisibleChunkRow;
  rank: number;
  ukoUri: string;
}

/** The answer's order: rank, then UKO URI, then live before superseded, then the latest superseded first. */
function byRankThenUri(a: Candidate, b: Candidate): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  const u = compareBinary(a.ukoUri, b.ukoUri);
  if (u !== 0) return u;
  const sa = a.row[4];
  const sb = b.row[4];
  if (sa === null || sb === null) return sa === sb ? 0 : sa === null ? -1 : 1;
  return sb - sa;
}

/** Matched rows past which `acms_topk` keeps counting but no longer ranks (about 40 bytes a row in SQLite's heap). */
export const TOPK_MAX_ROWS = 500_000;

/** How a search ranks within its scope: the MATCH (terms, and the scope's resources when `ridInMatch`), the scope's totals, and each term's rows once counted. */
interface Ranking {
  match: string;
  /** The query's terms, one phrase each in query order. */
  words: readonly string[];
  /** The view's principal, whose posting cache the ranking uses. */
  principal: string;
  /** `PRAGMA data_version` when the search began (see `tablesState`). */
  dataVersion: number;
  terms: number;
  ridInMatch: boolean;
  /** The scope's resource ids as JSON, for the join (`@rids`) when the MATCH does not name them. */
  rids: string;
  totals: KeywordTotals;
  /** The scope's chunk keys, when the ranking pass filters by them (see `ScopeKeys`). */
  keys: ScopeKeys | undefined;
  /** Each term's rows within the scope, from the last ranking pass. */
  phraseRows: number[];
  /** The rows the posting cache ranks (rather than FTS5), when it may. */
  postings: PostingScope | undefined;
}

/**
 * Keyword search on SQLite FTS5 (`porter unicode61`: Unicode word splitting, case and diacritic folding,
 * English stemming) over the rows SqliteDocumentStore keeps. Its cost follows the rows it returns, not the
 * rows the query matches (a long natural-language query matches most chunks): one pass over the index alone,
 * within the scope's resources, ranks and keeps the best `maxResults` plus a little slack (`topKSql`; for the
 * whole index and for scopes ranked by their chunk keys, the same ranking over the terms' postings held in
 * memory, KeywordPostings, several times faster than FTS5's walk with long queries); then only those rows'
 * chunks and visible versions are read (ChunkRowCache, which holds them until the tables change: staged
 * uploads not yet published drop there, versions outside the temporal scope here), and the search builds
 * their UKO URIs and orders them by rank, then URI (ties), then live before superseded, so the first row of
 * each URI is its best version.
 * Path filters run on these rows. When rows drop (older versions, a path filter, a staged upload), or a tie
 * at the cut may hide a row whose URI sorts first, the ranking runs again with twice the rows, until
 * `maxResults` pass or the rows run out: nothing is lost to the cut. Every statement of a search runs in one
 * synchronous step, so no write can commit between them: an answer comes from one committed state. Scores
 * are `r / (1 + r)` of BM25 relevance `r` (see normaliseBm25). A query with no indexable term answers empty.
 *
 * BM25's statistics are the scope's own (issue 24, finding 4): the row count, the average row length and
 * each term's row count come from the keyword rows of the view's resources only (every version the index
 * holds of them), so no write outside the view moves a score inside it and a view scores exactly as a
 * store holding only its resources would. Rows and tokens per resource are counters the store keeps in
 * step with the index (`keyword_resource_stats`, see KeywordRows); each term's row count is counted by the
 * ranking pass itself (the acms_fts5 extension's `acms_topk`, FTS5's bm25() formula with those statistics).
 * A view holding every row of the index takes FTS5's own totals and so scores exactly as bm25() does (and
 * faster than bm25() with ORDER BY, which counts each term's rows in passes of their own).
 */
export class Fts5TextBackend implements TextBackend {
  readonly hasNativeKeywordSearch = true;
  private readonly rankStatements = new Map<string, Statement<Record<string, unknown>, RankRow>>();
  private readonly pagedStatements = new Map<string, Statement<Record<string, unknown>, PagedRow>>();
  private readonly topKStatements = new Map<ScopeFilter, Statement<Record<string, unknown>, Buffer | null>>();
  private readonly chunkKeysOf: Statement<[string], bigint>;
  /**
   * Each principal's scopes' chunk keys by resource list (see `scopeKeys`), with the state of the tables they
   * were read at (`tablesState`), within SCOPE_KEYS_CACHE_BYTES and SCOPE_KEYS_CACHE_VIEWS (`heldKeysBytes`).
   */
  private readonly viewKeys = new FairShareCache<string, { writes: string; keys: ScopeKeys }>(SCOPE_KEYS_CACHE_BYTES);
  private viewKeysReads = 0;
  /** SQLite's count of commits by other connections (PRAGMA data_version): with `keywordWrites`, the state a cache was read at. */
  private readonly dataVersion: Statement<[], number>;
  private readonly scopeTotals: Statement<[string], KeywordTotals>;
  private readonly tableTotals: Statement<[], Buffer>;
  /**
   * The whole index's totals (FTS5's totals block) with the state they were read at: this connection's keyword
   * writes of any resource (`KeywordLog.writes`) and `PRAGMA data_version`. The block changes only with a
   * keyword row written, which moves one or the other, so a search in a settled index reads it once.
   */
  private heldTable = { writes: -1, dataVersion: -1, totals: { rows: 0, tokens: 0 } as KeywordTotals };
  /** Each view's resource tokens and resource ids (JSON), built once per view (views are immutable and cached). */
  private readonly viewJson = new WeakMap<ScopedBackendView, ViewTokens>();
  /**
   * Each view's row and token totals, with the state of the tables they were read at (`tablesState`):
   * summing them costs ~1 ms at 1,000 resources, and they stay what the table holds until a keyword write.
   */
  private readonly viewTotals = new WeakMap<ScopedBackendView, { writes: string; totals: KeywordTotals }>();
  /** The keyword index's postings term by term, for whole-index and large-scope rankings (none when disabled). */
  private readonly postings: KeywordPostings | undefined;
  /** The rows answers are made of, by chunk key. */
  private readonly chunkRows: ChunkRowCache;

  /**
   * Loads the acms_fts5 extension into `db` (throws when it is not built). `db` holds SqliteDocumentStore's
   * tables. `topKMaxRows`: matched rows past which the ranking pass counts but keeps no rows (TOPK_MAX_ROWS;
   * tests lower it); `ridMatchRowsPerResource`: see RID_MATCH_ROWS_PER_RESOURCE (tests pass 0);
   * `scopeKeysMaxRows`: see SCOPE_KEYS_MAX_ROWS (tests pass 0 for the join); `postingsCacheBytes`: see
   * KEYWORD_POSTINGS_CACHE_BYTES (0: every ranking in FTS5, as tests compare); `chunkRowCacheBytes`: see
   * CHUNK_ROW_CACHE_BYTES (0: every row read from SQLite, as tests compare).
   */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly topKMaxRows = TOPK_MAX_ROWS,
    private readonly ridMatchRowsPerResource = RID_MATCH_ROWS_PER_RESOURCE,
    private readonly scopeKeysMaxRows = SCOPE_KEYS_MAX_ROWS,
    postingsCacheBytes = KEYWORD_POSTINGS_CACHE_BYTES,
    chunkRowCacheBytes = CHUNK_ROW_CACHE_BYTES,
  ) {
    requireAcmsFts5(db);
    this.postings = postingsCacheBytes > 0 ? new KeywordPostings(db, postingsCacheBytes) : undefined;
    this.chunkRows = new ChunkRowCache(db, chunkRowCacheBytes);
    this.scopeTotals = db.prepare(
      `SELECT coalesce(sum(rows), 0) AS rows, coalesce(sum(tokens), 0) AS tokens FROM ${KEYWORD_STATS_TABLE} WHERE rid IN (SELECT value FROM json_each(?))`,
    );
    this.tableTotals = db.prepare<[], Buffer>("SELECT block FROM chunks_fts_data WHERE id = 1").pluck();
    this.dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck();
    this.chunkKeysOf = db
      .prepare<[string], bigint>("SELECT chunk_key FROM chunks WHERE resource_id IN (SELECT value FROM json_each(?))")
      .pluck()
      .safeIntegers();
  }

  async search(view: ScopedBackendView, query: string, opts: TextSearchOptions): Promise<{ hits: TextHit[]; exhaustive: boolean }> {
    const words = queryTerms(query);
    if (words.length === 0 || view.resourceIds.length === 0) return { hits: [], exhaustive: true };
    opts.signal?.throwIfAborted();
    const ranking = this.ranking(view, words);
    if (ranking === null) return { hits: [], exhaustive: true };
    const filterPaths = !view.paths.matchesAll;
    // Only path filters and older versions (one URI, several rows) can drop rows in a settled store; without
    // them one row beyond max_results is enough to tell whether the answer is exhaustive.
    const mayDrop = filterPaths || view.temporalScope !== "current";
    let page = Math.min(opts.maxResults + (mayDrop ? FIRST_PAGE_SLACK : 1), MAX_PAGE);
    const temporal = view.temporalScope;
    const cutoff = supersededCutoff(temporal, opts.now, opts.recentWindowMs) ?? 0;
    for (;;) {
      const { rows: ranked, complete, tiesWhole } = this.rank(ranking, page);
      const rankOf = new Map<number, number>();
      const keys: number[] = [];
      for (const [key, r] of ranked) {
        rankOf.set(key, r);
        keys.push(key);
      }
      const candidates: Candidate[] = [];
      for (const row of this.chunkRows.rows(view.principal, keys, ranking.dataVersion)) {
        // The temporal scope, as temporalCondition says it in SQL.
        const supersededAt = row[4];
        if (supersededAt !== null && (temporal === "current" || (temporal === "recent" && supersededAt < cutoff))) continue;
        candidates.push({ row, rank: rankOf.get(row[0])!, ukoUri: row[8] });
      }
      candidates.sort(byRankThenUri);
      // Rows ranked strictly better than the last one ranked are all here; rows tied with it may not be,
      // unless the pass kept the whole tie (a tie is ordered by URI here, which the pass cannot see).
      const cutRank = complete || ranked.length === 0 ? Infinity : ranked[ranked.length - 1][1];
      const hits: TextHit[] = [];
      const seen = new Set<string>();
      let settled = true;
      for (let i = 0; i < candidates.length; i++) {
        const c = candidates[i];
        if (c.rank > cutRank || (c.rank === cutRank && !tiesWhole)) {
          settled = false;
          break;
        }
        if (seen.has(c.ukoUri)) continue;
        seen.add(c.ukoUri);
        const [chunkKey, resourceId, path, chunkIndex, supersededAt, , text] = c.row;
        if (filterPaths && !view.paths.matches(path)) continue;
        const chunk: ChunkRecord = {
          chunkKey,
          resourceId,
          path,
          chunkIndex,
          text,
          metadata: metadataOf(c.row),
          supersededAt,
          ukoUri: c.ukoUri,
        };
        hits.push({ chunkKey, resourceId, path, score: normaliseBm25(-c.rank), chunk });
        if (hits.length === opts.maxResults) {
          // Exhaustive only when nothing ranked is left after this hit (another version of a URI already
          // answered would not be an answer, but telling so would cost a look further: as before, say no).
          const rest = i === candidates.length - 1 && complete;
          return { hits, exhaustive: rest };
        }
      }
      if (settled && complete) return { hits, exhaustive: true };
      if (page >= MAX_PAGE) return this.searchPaged(view, ranking, opts);
      page = Math.min(page * 2, MAX_PAGE);
    }
  }

  /**
   * The scope's MATCH and totals: null when its resources hold no row (nothing to find). A scope holding
   * every row of the index needs no filter and takes FTS5's own totals (bm25()'s statistics, so its scores).
   */
  private ranking(view: ScopedBackendView, words: readonly string[]): Ranking | null {
    let json = this.viewJson.get(view);
    if (json === undefined) {
      const tokenList = view.resourceIds.map(resourceToken);
      json = { tokens: JSON.stringify(tokenList), ids: JSON.stringify(view.resourceIds), tokenList, writesAt: -1, writes: 0 };
      this.viewJson.set(view, json);
    }
    const dataVersion = this.dataVersion.get()!;
    // This connection's keyword writes of any resource: with dataVersion, the state every held total was read at.
    const allWrites = keywordLog(this.db).writes;
    const writes = this.tablesState(json, allWrites, dataVersion);
    let held = this.viewTotals.get(view);
    if (held === undefined || held.writes !== writes) {
      held = { writes, totals: this.scopeTotals.get(json.tokens)! };
      this.viewTotals.set(view, held);
    }
    const scope = held.totals;
    if (scope.rows <= 0) return null;
    const terms = words.length;
    const table = this.tableTotalsAt(allWrites, dataVersion);
    if (scope.rows === table.rows)
      return {
        match: matchOfTerms(words, [], false)!,
        words,
        principal: view.principal,
        dataVersion,
        terms,
        ridInMatch: true,
        rids: json.ids,
        totals: table,
        keys: undefined,
        phraseRows: [],
        postings: this.postings ? WHOLE_INDEX : undefined,
      };
    const n = view.resourceIds.length;
    const matchAllowed =
      n <= ONE_STATEMENT_RID_MATCH_MAX_RESOURCES || (n <= RID_MATCH_MAX_RESOURCES && table.rows >= this.ridMatchRowsPerResource * n);
    // The posting cache ranks within the scope's chunk keys (see postingScope). In FTS5, the MATCH's resource
    // list is an n-way OR over the scope's rows; the chunk keys cost a look-up per row the terms match between
    // the scope's first and last key (at most that span of the table, times the terms' OR): the MATCH only
    // where it is cheaper. The span holds at least the scope's rows, so the keys can be cheaper only past as
    // many resources as terms: without the cache, below that they are not even read (a large resource written
    // to would read its keys after every write only to choose the MATCH; with the cache, they are what it
    // ranks with, and reading them costs less than FTS5's walk of the scope).
    const keys =
      scope.rows <= this.scopeKeysMaxRows && (!matchAllowed || n > terms || this.postings !== undefined)
        ? this.scopeKeys(view.principal, json.ids, writes)
        : undefined;
    const span = keys === undefined ? 0 : Math.min(table.rows, Number(keys.last - keys.first) + 1);
    const keysCheaper = keys !== undefined && n * scope.rows > span * terms;
    const ridInMatch = matchAllowed && !keysCheaper;
    return {
      match: matchOfTerms(words, view.resourceIds, ridInMatch)!,
      words,
      principal: view.principal,
      dataVersion,
      terms,
      ridInMatch,
      rids: json.ids,
      totals: scope,
      keys,
      phraseRows: [],
      postings: keys === undefined ? undefined : this.postingScope(view.principal, keys, scope.rows, json.ids),
    };
  }

  /**
   * The best `limit` rows of the scope, best first, with the rest of a tie at the cut: one `acms_topk` pass,
   * which counts each term's rows too; past TOPK_MAX_ROWS matched rows it keeps only the counts, and the
   * ranking statement scores with them.
   */
  private rank(ranking: Ranking, limit: number): RankedPage {
    const { match, terms, ridInMatch, rids, totals, keys } = ranking;
    if (ranking.postings !== undefined) {
      const held = this.postings!.rank(ranking.principal, ranking.words, ranking.postings, totals, limit, ranking.dataVersion);
      if (held !== undefined) {
        ranking.phraseRows = held.phraseRows;
        return held;
      }
    }
    const params: Record<string, unknown> = { match, terms, limit, cap: this.topKMaxRows, rows: totals.rows, tokens: totals.tokens };
    const filter: ScopeFilter = ridInMatch ? "match" : keys ? "keys" : "join";
    if (filter === "keys") {
      // FTS5 starts its walk at the scope's first chunk key and stops after its last (keys written together
      // are near each other: a resource's or a project's upload), the keys doing the rest.
      params.keys = keys!.blob;
      params.first = keys!.first;
      params.last = keys!.last;
    }
    if (filter === "join") params.rids = rids;
    const { phraseRows, ranked } = readTopK(this.topKStatement(filter).get(params) ?? null, terms);
    ranking.phraseRows = phraseRows;
    if (ranked !== undefined) return ranked;
    const rankParams: Record<string, unknown> = { match, limit, ...scoreParams(totals, phraseRows) };
    if (!ridInMatch) rankParams.rids = rids;
    const rows = this.rankStatement(ridInMatch, terms).all(rankParams);
    return { rows, complete: rows.length < limit, tiesWhole: false };
  }

  /**
   * The search in one statement read page by page (`rankedSearchSql`, each page a further OFFSET): for the
   * rare search whose filters drop more than MAX_PAGE ranked rows, so no run holds more than a page of rows.
   */
  private searchPaged(view: ScopedBackendView, ranking: Ranking, opts: TextSearchOptions): { hits: TextHit[]; exhaustive: boolean } {
    const { match, ridInMatch, rids, totals, phraseRows } = ranking;
    const stmt = this.pagedStatement(view.temporalScope, ridInMatch, phraseRows.length);
    const params: Record<string, unknown> & { offset: number } = {
      match,
      cutoff: supersededCutoff(view.temporalScope, opts.now, opts.recentWindowMs) ?? 0,
      limit: MAX_PAGE,
      offset: 0,
      ...scoreParams(totals, phraseRows),
    };
    if (!ridInMatch) params.rids = rids;
    const hits: TextHit[] = [];
    const metadataByDoc = new Map<number, Record<string, string>>();
    const seen = new Set<string>();
    const filterPaths = !view.paths.matchesAll;
    for (;;) {
      const rows = stmt.all(params);
      for (let i = 0; i < rows.length; i++) {
        const [chunkKey, resourceId, path, chunkIndex, supersededAt, ukoUri, bm25Rank, docKey, text, metadataJson] = rows[i];
        if (seen.has(ukoUri)) continue;
        seen.add(ukoUri);
        if (filterPaths && !view.paths.matches(path)) continue;
        let metadata = metadataByDoc.get(docKey);
        if (!metadata) metadataByDoc.set(docKey, (metadata = JSON.parse(metadataJson) as Record<string, string>));
        const chunk: ChunkRecord = { chunkKey, resourceId, path, chunkIndex, text, metadata, supersededAt, ukoUri };
        hits.push({ chunkKey, resourceId, path, score: normaliseBm25(-bm25Rank), chunk });
        if (hits.length === opts.maxResults) return { hits, exhaustive: i === rows.length - 1 && rows.length < MAX_PAGE };
      }
      if (rows.length < MAX_PAGE) return { hits, exhaustive: true };
      params.offset += rows.length;
    }
  }

  private pagedStatement(
    temporal: TemporalScope,
    ridInMatch: boolean,
    phrases: number | undefined,
  ): Statement<Record<string, unknown>, PagedRow> {
    const key = `${temporal}:${ridInMatch}:${phrases ?? ""}`;
    let stmt = this.pagedStatements.get(key);
    if (!stmt) {
      stmt = this.db.prepare<Record<string, unknown>, PagedRow>(rankedSearchSql(temporal, ridInMatch, phrases)).raw(true);
      this.pagedStatements.set(key, stmt);
    }
    return stmt;
  }

  /** The ranking statement, cached per scope mode and per number of terms (each term has its own bound statistic). */
  private rankStatement(ridInMatch: boolean, phrases: number | undefined): Statement<Record<string, unknown>, RankRow> {
    const key = `${ridInMatch}:${phrases ?? ""}`;
    let stmt = this.rankStatements.get(key);
    if (!stmt) {
      stmt = this.db.prepare<Record<string, unknown>, RankRow>(rankSql(ridInMatch, phrases)).raw(true);
      this.rankStatements.set(key, stmt);
    }
    return stmt;
  }

  private topKStatement(filter: ScopeFilter): Statement<Record<string, unknown>, Buffer | null> {
    let stmt = this.topKStatements.get(filter);
    if (!stmt) {
      stmt = this.db.prepare<Record<string, unknown>, Buffer | null>(topKSql(filter)).pluck(true);
      this.topKStatements.set(filter, stmt);
    }
    return stmt;
  }

  /**
   * Where the keyword tables stand for a view's resources: this connection's keyword writes of those
   * resources (`keywordWrites`) and the commits of any other connection (`dataVersion`, the connection's
   * `PRAGMA data_version`, which its own commits do not move). What was read from the tables about those
   * resources at one state is what they hold while it is the same; other tenants' uploads leave it alone.
   * The resources' writes are summed again only after a keyword write of any resource (`allWrites`, this
   * connection's `KeywordLog.writes`; a sum over 1,000 resources costs ~15 us a search).
   */
  private tablesState(view: ViewTokens, allWrites: number, dataVersion: number): string {
    if (view.writesAt !== allWrites) {
      view.writes = keywordWrites(this.db, view.tokenList);
      view.writesAt = allWrites;
    }
    return `${view.writes}:${dataVersion}`;
  }

  /** The whole index's row and token totals at this connection's keyword writes `writes` and `dataVersion` (see `heldTable`). */
  private tableTotalsAt(writes: number, dataVersion: number): KeywordTotals {
    const held = this.heldTable;
    if (held.writes === writes && held.dataVersion === dataVersion) return held.totals;
    const totals = fts5TableTotals(this.tableTotals.get());
    this.heldTable = { writes, dataVersion, totals };
    return totals;
  }

  /**
   * The posting cache's scope for a scope whose chunk keys were read: undefined (rank in FTS5) when the keys
   * span more rows than it scores, or many more than the scope holds.
   */
  private postingScope(principal: string, keys: ScopeKeys, scopeRows: number, ids: string): PostingScope | undefined {
    if (this.postings === undefined || keys.last < keys.first) return undefined;
    const span = Number(keys.last - keys.first) + 1;
    if (span > KEYWORD_POSTINGS_MAX_SPAN || span > scopeRows * POSTINGS_MAX_SPAN_PER_ROW) return undefined;
    if (keys.bits === undefined) {
      const first = keys.first;
      const bits = new Uint8Array((span + 7) >> 3);
      const all = new BigInt64Array(keys.blob.buffer, keys.blob.byteOffset, keys.blob.length / 8);
      for (let i = 0; i < all.length; i++) {
        const o = Number(all[i] - first);
        bits[o >> 3] |= 1 << (o & 7);
      }
      keys.bits = bits;
      // Counted with the keys while they are held (they are: just read or used).
      const held = this.viewKeys.get(principal, ids);
      if (held?.keys === keys) this.viewKeys.set(principal, ids, held, heldKeysBytes(ids, keys));
    }
    return { first: Number(keys.first), last: Number(keys.last), bits: keys.bits };
  }

  /**
   * The chunk keys of the resources `ids` (JSON), ascending, as a blob for acms_tf; held for `principal` until
   * a keyword write of one of them.
   */
  private scopeKeys(principal: string, ids: string, writes: string): ScopeKeys {
    // Held by the scope's resource list (views of one list share them; no view is kept alive by this).
    const held = this.viewKeys.get(principal, ids);
    if (held !== undefined && held.writes === writes) return held.keys;
    this.viewKeysReads += 1;
    // Sorted here (a typed array's sort), not by SQLite's sorter: several times faster at a million keys.
    const all = BigInt64Array.from(this.chunkKeysOf.all(ids) as bigint[]).sort();
    const keys: ScopeKeys =
      all.length === 0
        ? { blob: Buffer.alloc(0), first: 1n, last: 0n }
        : { blob: Buffer.from(all.buffer), first: all[0], last: all[all.length - 1] };
    this.viewKeys.set(principal, ids, { writes, keys }, heldKeysBytes(ids, keys));
    return keys;
  }

  /**
   * The chunk keys held (figures for tests): the scopes they are held for (one per principal and resource
   * list), the bytes counted for them (`heldKeysBytes`), the principals holding some, and how many times keys
   * were read.
   */
  get heldScopeKeys(): { views: number; bytes: number; principals: number; reads: number } {
    const { entries, bytes, principals } = this.viewKeys.holdings;
    return { views: entries, bytes, principals, reads: this.viewKeysReads };
  }

  /** The posting cache's holdings (figures for tests): terms, bytes, and how many times postings were read from FTS5. */
  get heldPostingCache(): { terms: number; bytes: number; reads: number } {
    return this.postings?.heldPostings ?? { terms: 0, bytes: 0, reads: 0 };
  }

  /** The chunk rows held (figures for tests): see ChunkRowCache.heldRows. */
  get heldChunkRows(): { rows: number; bytes: number; principals: number; reads: number } {
    return this.chunkRows.heldRows;
  }
}
