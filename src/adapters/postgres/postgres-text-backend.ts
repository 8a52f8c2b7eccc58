import { normaliseBm25 } from "../../domain/bm25-normalise.js";
import { FTS5_BM25, FTS5_MIN_IDF } from "../../domain/bm25.js";
import { keywordQueryPhrases } from "../../domain/keyword-query.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { TemporalScope } from "../../domain/scope.js";
import { supersededCutoff } from "../../domain/temporal-filter.js";
import type { TextBackend, TextHit, TextSearchOptions } from "../../ports/text-backend.js";
import { inTransaction, type PostgresPool } from "./postgres-pool.js";

/** Rows fetched by the first page beyond max_results; later pages double (as the FTS5 backend pages). */
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

function temporalCondition(temporal: TemporalScope): string {
  if (temporal === "all") return "TRUE";
  if (temporal === "recent") return "(c.superseded_at IS NULL OR c.superseded_at >= $7::bigint)";
  return "c.superseded_at IS NULL";
}

const K1 = `${FTS5_BM25.k1}::float8`;
const B = `${FTS5_BM25.b}::float8`;

/**
 * The ranked SQL of a scoped keyword search: Okapi BM25 computed exactly as SQLite FTS5's `bm25()` does,
 * from the term statistics PostgresDocumentStore keeps. Parameters: $1 phrase number, $2 offset in the
 * phrase, $3 term (one element per query term), $4 the scope's resource ids, $5 the `recent` cutoff,
 * $6 limit, $7 offset.
 *
 * - Statistics as FTS5 keeps them: N and the average row length over every row of the keyword table
 *   (all resources, superseded versions included), and a phrase's IDF from the rows holding it anywhere,
 *   `ln((N − n + 0.5) / (n + 0.5))` floored at 1e-6. The scope never changes a score. N, the total
 *   length and a term's n are counters kept in the write transactions (`index_state`, `term_df`);
 *   only a multi-term phrase's n is counted from the postings at query time.
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
  return `
WITH q AS (
  SELECT phrase, off, term, count(*) OVER (PARTITION BY phrase) AS plen
    FROM unnest($1::integer[], $2::integer[], $3::text[]) AS u (phrase, off, term)
),
stats AS (
  SELECT keyword_rows::float8 AS n, keyword_tokens::float8 / greatest(keyword_rows, 1)::float8 AS avgdl FROM index_state WHERE id = 1
),
single_df AS (
  SELECT q.phrase, coalesce((SELECT t.df FROM term_df t WHERE t.term = q.term), 0) AS df FROM q WHERE q.plen = 1
),
multi_hits_all AS (
  SELECT phrase, chunk_key, count(*) AS f FROM (
    SELECT q.phrase, p.chunk_key FROM q JOIN postings p ON p.term = q.term CROSS JOIN LATERAL unnest(p.positions) AS pos (at)
     WHERE q.plen > 1 GROUP BY q.phrase, p.chunk_key, pos.at - q.off, q.plen HAVING count(*) = q.plen
  ) starts GROUP BY phrase, chunk_key
),
df AS (
  SELECT phrase, df FROM single_df
  UNION ALL SELECT phrase, count(*) FROM multi_hits_all GROUP BY phrase
),
idf AS (
  SELECT df.phrase, CASE WHEN x <= 0 THEN ${FTS5_MIN_IDF}::float8 ELSE x END AS idf
    FROM df CROSS JOIN stats CROSS JOIN LATERAL (SELECT ln((stats.n - df.df::float8 + 0.5::float8) / (df.df::float8 + 0.5::float8)) AS x) l
),
hits AS (
  SELECT q.phrase, p.chunk_key, cardinality(p.positions)::float8 AS f
    FROM q JOIN postings p ON p.term = q.term AND p.resource_id = ANY($4::text[]) WHERE q.plen = 1
  UNION ALL
  SELECT m.phrase, m.chunk_key, m.f::float8 FROM multi_hits_all m JOIN keyword_rows k ON k.chunk_key = m.chunk_key AND k.resource_id = ANY($4::text[])
),
scored AS (
  SELECT h.chunk_key,
         sum(i.idf * ((h.f * (${K1} + 1.0::float8)) / (h.f + ${K1} * (1.0::float8 - ${B} + ${B} * k.length::float8 / s.avgdl))) ORDER BY h.phrase) AS score
    FROM hits h JOIN idf i ON i.phrase = h.phrase JOIN keyword_rows k ON k.chunk_key = h.chunk_key CROSS JOIN stats s
   GROUP BY h.chunk_key
)
SELECT c.chunk_key, c.resource_id, c.path, c.superseded_at,
       ('uko://' || c.resource_id || '/' || c.path || '#' || c.chunk_index) COLLATE "C" AS uko_uri, sc.score
  FROM scored sc JOIN chunks c ON c.chunk_key = sc.chunk_key
 WHERE ${temporalCondition(temporal)}
 ORDER BY sc.score DESC, uko_uri, c.superseded_at IS NOT NULL, c.superseded_at DESC
 LIMIT $5 OFFSET $6`;
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
 * checked against FTS5), the same query semantics (distinct words OR-ed), FTS5's statistics, formula and
 * order, and the same score map `r / (1 + r)`. Path filters run on the ranked rows page after page until
 * `maxResults` pass, so they never cost recall; the pages are read in one repeatable-read transaction, so
 * an answer comes from one committed state.
 */
export class PostgresTextBackend implements TextBackend {
  readonly hasNativeKeywordSearch = true;
  private readonly sql = new Map<TemporalScope, string>();

  constructor(private readonly pool: PostgresPool) {}

  async search(view: ScopedBackendView, query: string, opts: TextSearchOptions): Promise<{ hits: TextHit[]; exhaustive: boolean }> {
    const params = phraseParams(query);
    if (params === undefined || view.resourceIds.length === 0) return { hits: [], exhaustive: true };
    let sql = this.sql.get(view.temporalScope);
    if (!sql) this.sql.set(view.temporalScope, (sql = postgresRankedSql(view.temporalScope)));
    const cutoff = view.temporalScope === "recent" ? [supersededCutoff("recent", opts.now, opts.recentWindowMs)!] : [];
    const filterPaths = !view.paths.matchesAll;
    const mayDrop = filterPaths || view.temporalScope !== "current";
    opts.signal?.throwIfAborted();
    return inTransaction(
      this.pool,
      async (c) => {
        const hits: TextHit[] = [];
        const seen = new Set<string>();
        let page = Math.min(opts.maxResults + (mayDrop ? FIRST_PAGE_SLACK : 1), MAX_PAGE);
        let offset = 0;
        for (;;) {
          const { rows } = await c.query<PostgresRankedRow>(sql!, [
            params.phrase,
            params.offset,
            params.term,
            view.resourceIds,
            page,
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
            if (hits.length === opts.maxResults) return { hits, exhaustive: i === rows.length - 1 && rows.length < page };
          }
          if (rows.length < page) return { hits, exhaustive: true };
          offset += rows.length;
          page = Math.min(page * 2, MAX_PAGE);
        }
      },
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }
}
