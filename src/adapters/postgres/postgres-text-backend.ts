import { normaliseBm25 } from "../../domain/bm25-normalise.js";
import { FTS5_BM25, FTS5_MIN_IDF } from "../../domain/bm25.js";
import { keywordQueryPhrases } from "../../domain/keyword-query.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { TemporalScope } from "../../domain/scope.js";
import { supersededCutoff } from "../../domain/temporal-filter.js";
import type { TextBackend, TextHit, TextSearchOptions } from "../../ports/text-backend.js";
import { inTransaction, type PostgresClient, type PostgresPool } from "./postgres-pool.js";

/** Rows ranked by the first run beyond max_results; later runs double (as the FTS5 backend does). */
const FIRST_PAGE_SLACK = 16;
const MAX_PAGE = 65_536;

/** One row of the ranked query. */
export interface PostgresRankedRow {
  chunk_key: number;
  resource_id: string;
  path: string;
  superseded_at: number | null;
  uko_uri: string;
  score: number;
}

/** One row of the top-rows query: a ranked row, its chunk when it is within the temporal scope. */
interface PostgresTopRow {
  chunk_key: number;
  score: number;
  visible: boolean;
  resource_id: string;
  path: string;
  uko_uri: string;
}

function temporalCondition(temporal: TemporalScope, cutoffParam = 7): string {
  if (temporal === "all") return "TRUE";
  if (temporal === "recent") return `(c.superseded_at IS NULL OR c.superseded_at >= $${cutoffParam}::bigint)`;
  return "c.superseded_at IS NULL";
}

const K1 = `${FTS5_BM25.k1}::float8`;
const B = `${FTS5_BM25.b}::float8`;

/** The scoring of postgresRankedSql and postgresTopSql (see postgresRankedSql): CTEs ending in `scored` (chunk_key, score). */
const SCORED_CTES = `
WITH q AS (
  SELECT phrase, off, term, count(*) OVER (PARTITION BY phrase) AS plen
    FROM unnest($1::integer[], $2::integer[], $3::text[]) AS u (phrase, off, term)
),
stats AS (
  SELECT coalesce(sum(row_count), 0)::float8 AS n, coalesce(sum(token_count), 0)::float8 / greatest(coalesce(sum(row_count), 0), 1)::float8 AS avgdl
    FROM resource_keyword_stats WHERE resource_id = ANY($4::text[])
),
multi_hits AS (
  SELECT phrase, chunk_key, count(*) AS f FROM (
    SELECT q.phrase, p.chunk_key FROM q JOIN postings p ON p.term = q.term AND p.resource_id = ANY($4::text[])
     CROSS JOIN LATERAL unnest(p.positions) AS pos (at)
     WHERE q.plen > 1 GROUP BY q.phrase, p.chunk_key, pos.at - q.off, q.plen HAVING count(*) = q.plen
  ) starts GROUP BY phrase, chunk_key
),
hits AS (
  SELECT q.phrase, p.chunk_key, cardinality(p.positions)::float8 AS f
    FROM q JOIN postings p ON p.term = q.term AND p.resource_id = ANY($4::text[]) WHERE q.plen = 1
  UNION ALL
  SELECT m.phrase, m.chunk_key, m.f::float8 FROM multi_hits m
),
idf AS (
  SELECT df.phrase, CASE WHEN x <= 0 THEN ${FTS5_MIN_IDF}::float8 ELSE x END AS idf
    FROM (SELECT phrase, count(*) AS df FROM hits GROUP BY phrase) df CROSS JOIN stats
   CROSS JOIN LATERAL (SELECT ln((stats.n - df.df::float8 + 0.5::float8) / (df.df::float8 + 0.5::float8)) AS x) l
),
scored AS (
  SELECT h.chunk_key,
         sum(i.idf * ((h.f * (${K1} + 1.0::float8)) / (h.f + ${K1} * (1.0::float8 - ${B} + ${B} * k.length::float8 / s.avgdl))) ORDER BY h.phrase) AS score
    FROM hits h JOIN idf i ON i.phrase = h.phrase JOIN keyword_rows k ON k.chunk_key = h.chunk_key CROSS JOIN stats s
   GROUP BY h.chunk_key
)`;

/**
 * The ranked SQL of a scoped keyword search: Okapi BM25 computed exactly as SQLite FTS5's `bm25()` does,
 * from the term statistics PostgresDocumentStore keeps. Parameters: $1 phrase number, $2 offset in the
 * phrase, $3 term (one element per query term), $4 the scope's resource ids, $5 the `recent` cutoff,
 * $6 limit, $7 offset.
 *
 * - Statistics as FTS5 would keep them in a table holding the scope's resources only: N and the average
 *   row length over every row of the scope's resources (superseded versions included), and a phrase's
 *   IDF from the rows of those resources that hold it, `ln((N − n + 0.5) / (n + 0.5))` floored at 1e-6.
 *   So no write to a resource outside the scope moves a score, nor tells the caller anything about that
 *   resource; a scope covering every resource scores as FTS5 over the whole table. N and the total length
 *   are sums of the per-resource counters kept in the write transactions (`resource_keyword_stats`); a
 *   phrase's n is the number of its in-scope matches, the very rows the query reads to score them.
 * - The phrase frequencies are read for in-scope rows only (postings are keyed by term, then resource),
 *   and the visible-version condition is in the same query: the scope is pushed into SQL.
 * - A multi-term phrase (a query word the tokenizer splits) counts the positions where its terms follow
 *   each other, as an FTS5 phrase query does.
 * - A row's score adds its phrases' terms in query order with FTS5's own float8 arithmetic
 *   (`idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * |D| / avgdl))`), so equal inputs give the same double.
 * - Order: score, then UKO URI (byte order), then live before superseded, newest first, as the FTS5
 *   backend orders; exported for the bench's baseline.
 */
export function postgresRankedSql(temporal: TemporalScope): string {
  return `${SCORED_CTES}
SELECT c.chunk_key, c.resource_id, c.path, c.superseded_at,
       ('uko://' || c.resource_id || '/' || c.path || '#' || c.chunk_index) COLLATE "C" AS uko_uri, sc.score
  FROM scored sc JOIN chunks c ON c.chunk_key = sc.chunk_key
 WHERE ${temporalCondition(temporal)}
 ORDER BY sc.score DESC, uko_uri, c.superseded_at IS NOT NULL, c.superseded_at DESC
 LIMIT $5 OFFSET $6`;
}

/**
 * The top rows of a scoped keyword search: the scores of `postgresRankedSql`, but ranked and cut on the
 * scores alone (`LIMIT $5`, no chunk row, version or URI per matched row), then the kept rows joined to
 * their chunks, each with whether its version is within the temporal scope ($6, the `recent` cutoff), and
 * ordered as postgresRankedSql orders. Every ranked row comes back (the invisible ones too), so the caller
 * knows where the cut fell.
 */
export function postgresTopSql(temporal: TemporalScope): string {
  return `${SCORED_CTES},
top AS (SELECT chunk_key, score FROM scored ORDER BY score DESC LIMIT $5)
SELECT t.chunk_key, t.score, (c.chunk_key IS NOT NULL AND ${temporalCondition(temporal, 6)}) AS visible, c.resource_id, c.path,
       ('uko://' || c.resource_id || '/' || c.path || '#' || c.chunk_index) COLLATE "C" AS uko_uri
  FROM top t LEFT JOIN chunks c ON c.chunk_key = t.chunk_key
 ORDER BY t.score DESC, uko_uri, c.superseded_at IS NOT NULL, c.superseded_at DESC`;
}

/** The query's phrases as the three parallel arrays postgresRankedSql takes. */
export function phraseParams(query: string): { phrase: number[]; offset: number[]; term: string[] } | undefined {
  const phrases = keywordQueryPhrases(query).filter((p) => p.length > 0);
  if (phrases.length === 0) return undefined;
  const out = { phrase: [] as number[], offset: [] as number[], term: [] as string[] };
  phrases.forEach((p, i) =>
    p.forEach((t, j) => {
      out.phrase.push(i);
      out.offset.push(j);
      out.term.push(t);
    }),
  );
  return out;
}

/**
 * Keyword search on PostgreSQL with BM25 scored in SQL from term statistics (not `ts_rank`), ranking as
 * the embedded FTS5 engine ranks: the same tokenizer and stemmer (the domain's unicode61 and Porter,
 * checked against FTS5), the same query semantics (distinct words OR-ed), FTS5's statistics (drawn from the
 * scope's resources only), formula and order, and the same score map `r / (1 + r)`. Its cost follows the rows it returns: the rows are ranked
 * and cut on their scores alone, and only the kept ones are joined to their chunks for their version and
 * URI (`postgresTopSql`). Versions outside the temporal scope and path filters drop rows after the cut;
 * when too few pass, or a tie straddles the cut, the ranking runs again with twice the rows, so filters
 * never cost recall. Every run of one search is in one repeatable-read transaction, so an answer comes from
 * one committed state.
 */
export class PostgresTextBackend implements TextBackend {
  readonly hasNativeKeywordSearch = true;
  private readonly topSql = new Map<TemporalScope, string>();
  private readonly rankedSql = new Map<TemporalScope, string>();

  constructor(private readonly pool: PostgresPool) {}

  async search(view: ScopedBackendView, query: string, opts: TextSearchOptions): Promise<{ hits: TextHit[]; exhaustive: boolean }> {
    const params = phraseParams(query);
    if (params === undefined || view.resourceIds.length === 0) return { hits: [], exhaustive: true };
    const cutoff = view.temporalScope === "recent" ? [supersededCutoff("recent", opts.now, opts.recentWindowMs)!] : [];
    const filterPaths = !view.paths.matchesAll;
    const mayDrop = filterPaths || view.temporalScope !== "current";
    const top = this.statement(this.topSql, view.temporalScope, postgresTopSql);
    opts.signal?.throwIfAborted();
    return inTransaction(
      this.pool,
      async (c) => {
        let page = Math.min(opts.maxResults + (mayDrop ? FIRST_PAGE_SLACK : 1), MAX_PAGE);
        for (;;) {
          const { rows } = await c.query<PostgresTopRow>(top, [
            params.phrase,
            params.offset,
            params.term,
            view.resourceIds,
            page,
            ...cutoff,
          ]);
          opts.signal?.throwIfAborted();
          const complete = rows.length < page;
          // Rows scored strictly above the lowest kept score are all here; rows tied with it may not be.
          let cut = -Infinity;
          if (!complete) for (const row of rows) cut = cut === -Infinity || row.score < cut ? row.score : cut;
          const hits: TextHit[] = [];
          const seen = new Set<string>();
          let settled = true;
          for (let i = 0; i < rows.length; i++) {
            const row = rows[i];
            if (row.score <= cut) {
              settled = false;
              break;
            }
            if (!row.visible || seen.has(row.uko_uri)) continue;
            seen.add(row.uko_uri);
            if (filterPaths && !view.paths.matches(row.path)) continue;
            hits.push({ chunkKey: row.chunk_key, resourceId: row.resource_id, path: row.path, score: normaliseBm25(row.score) });
            if (hits.length === opts.maxResults) return { hits, exhaustive: complete && !rows.slice(i + 1).some((r) => r.visible) };
          }
          if (settled && complete) return { hits, exhaustive: true };
          if (page >= MAX_PAGE) return this.searchPaged(c, view, params, cutoff, opts);
          page = Math.min(page * 2, MAX_PAGE);
        }
      },
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }

  /** The search in one statement read page by page (`postgresRankedSql`): for the rare search whose filters drop more than MAX_PAGE ranked rows. */
  private async searchPaged(
    c: PostgresClient,
    view: ScopedBackendView,
    params: NonNullable<ReturnType<typeof phraseParams>>,
    cutoff: number[],
    opts: TextSearchOptions,
  ): Promise<{ hits: TextHit[]; exhaustive: boolean }> {
    const sql = this.statement(this.rankedSql, view.temporalScope, postgresRankedSql);
    const filterPaths = !view.paths.matchesAll;
    const hits: TextHit[] = [];
    const seen = new Set<string>();
    for (let offset = 0; ; offset += MAX_PAGE) {
      const { rows } = await c.query<PostgresRankedRow>(sql, [
        params.phrase,
        params.offset,
        params.term,
        view.resourceIds,
        MAX_PAGE,
        offset,
        ...cutoff,
      ]);
      opts.signal?.throwIfAborted();
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        if (seen.has(row.uko_uri)) continue;
        seen.add(row.uko_uri);
        if (filterPaths && !view.paths.matches(row.path)) continue;
        hits.push({ chunkKey: row.chunk_key, resourceId: row.resource_id, path: row.path, score: normaliseBm25(row.score) });
        if (hits.length === opts.maxResults) return { hits, exhaustive: i === rows.length - 1 && rows.length < MAX_PAGE };
      }
      if (rows.length < MAX_PAGE) return { hits, exhaustive: true };
    }
  }

  private statement(cache: Map<TemporalScope, string>, temporal: TemporalScope, make: (t: TemporalScope) => string): string {
    let sql = cache.get(temporal);
    if (!sql) cache.set(temporal, (sql = make(temporal)));
    return sql;
  }
}
