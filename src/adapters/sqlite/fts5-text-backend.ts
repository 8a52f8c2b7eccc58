import type { Statement } from "better-sqlite3";
import { normaliseBm25 } from "../../domain/bm25-normalise.js";
import { supersededCutoff } from "../../domain/temporal-filter.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { TemporalScope } from "../../domain/scope.js";
import type { ChunkRecord } from "../../ports/document-store.js";
import type { TextBackend, TextHit, TextSearchOptions } from "../../ports/text-backend.js";
import { matchAnyTerm, queryTerms, quoteFts5 } from "./fts5-match-query.js";
import { resourceToken } from "./sqlite-document-store.js";
import type { SqliteDatabase } from "../../adapter-kit/sqlite-database.js";

/**
 * Scopes of at most this many resources are also pushed into the FTS5 MATCH itself (`rid : (...)`),
 * so FTS5 intersects the query's doclists with the resources' and ranks only in-scope rows. Larger
 * scopes filter the join on `resource_id IN (...)` instead, which beats an OR of thousands of doclists.
 */
export const RID_MATCH_MAX_RESOURCES = 32;

/** Rows fetched by the first page of a search beyond max_results; later pages double (each page re-runs the query, so doubling keeps the re-runs to a logarithmic count). */
const FIRST_PAGE_SLACK = 16;
const MAX_PAGE = 65_536;

/**
 * One row of the ranked query, read as an array in column order (better-sqlite3's raw mode): building an
 * object with ten named properties per row cost about 8% of the statement.
 */
type RawRankedRow = [
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
 * the statement's instructions). Exported for the benches' baselines.
 */
export function rankedSearchSql(temporal: TemporalScope, ridInMatch = false): string {
  return `SELECT c.chunk_key, c.resource_id, c.path, c.chunk_index, d.superseded_at,
      'uko://' || c.resource_id || '/' || c.path || '#' || c.chunk_index AS uko_uri,
      bm25(chunks_fts, 1.0, 0.0) AS bm25_rank, c.doc_key, c.text, d.metadata
    FROM chunks_fts JOIN chunks c ON c.chunk_key = chunks_fts.rowid JOIN visible_documents d ON d.doc_key = c.doc_key
    WHERE chunks_fts MATCH @match
      ${ridInMatch ? "" : "AND c.resource_id IN (SELECT value FROM json_each(@rids))"}
      AND ${temporalCondition(temporal)}
    ORDER BY bm25_rank, uko_uri, d.superseded_at IS NOT NULL, d.superseded_at DESC
    LIMIT (@limit + 0) OFFSET (@offset + 0)`;
}

/** The MATCH expression for a query's terms within a scope (undefined when the query has no terms). */
export function scopedMatch(query: string, resourceIds: readonly string[]): string | undefined {
  const terms = matchAnyTerm("body", queryTerms(query));
  if (terms === undefined) return undefined;
  if (resourceIds.length > RID_MATCH_MAX_RESOURCES) return terms;
  return `${terms} AND rid : (${resourceIds.map((id) => quoteFts5(resourceToken(id))).join(" OR ")})`;
}

/**
 * Keyword search on SQLite FTS5 (`porter unicode61`: Unicode word splitting, case and diacritic folding,
 * English stemming) over the rows SqliteDocumentStore keeps. The scope is pushed into SQL (resources,
 * visible versions); path filters run on the ranked rows as they are read, page after page, until
 * `maxResults` pass or the rows run out, so a path filter never costs recall. The pages are read in one
 * synchronous run, so no write can commit between them: an answer comes from one committed state. Scores are
 * `r / (1 + r)` of BM25 relevance `r` (see normaliseBm25). A query with no indexable term answers empty.
 */
export class Fts5TextBackend implements TextBackend {
  readonly hasNativeKeywordSearch = true;
  private readonly statements = new Map<string, Statement<Record<string, unknown>, RawRankedRow>>();

  constructor(private readonly db: SqliteDatabase) {}

  async search(view: ScopedBackendView, query: string, opts: TextSearchOptions): Promise<{ hits: TextHit[]; exhaustive: boolean }> {
    const match = scopedMatch(query, view.resourceIds);
    if (match === undefined || view.resourceIds.length === 0) return { hits: [], exhaustive: true };
    const ridInMatch = view.resourceIds.length <= RID_MATCH_MAX_RESOURCES;
    const stmt = this.statement(view.temporalScope, ridInMatch);
    const params: { match: string; cutoff: number; limit: number; offset: number; rids?: string } = {
      match,
      cutoff: supersededCutoff(view.temporalScope, opts.now, opts.recentWindowMs) ?? 0,
      limit: 0,
      offset: 0,
    };
    if (!ridInMatch) params.rids = JSON.stringify(view.resourceIds);
    const hits: TextHit[] = [];
    const metadataByDoc = new Map<number, Record<string, string>>();
    const seen = new Set<string>();
    const filterPaths = !view.paths.matchesAll;
    // Only path filters and older versions (one URI, several rows) can drop rows; without them one row
    // beyond max_results is enough to tell whether the answer is exhaustive.
    const mayDrop = filterPaths || view.temporalScope !== "current";
    let page = Math.min(opts.maxResults + (mayDrop ? FIRST_PAGE_SLACK : 1), MAX_PAGE);
    opts.signal?.throwIfAborted();
    for (;;) {
      params.limit = page;
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
        if (hits.length === opts.maxResults) {
          return { hits, exhaustive: i === rows.length - 1 && rows.length < page };
        }
      }
      if (rows.length < page) return { hits, exhaustive: true };
      params.offset += rows.length;
      page = Math.min(page * 2, MAX_PAGE);
    }
  }

  private statement(temporal: TemporalScope, ridInMatch: boolean): Statement<Record<string, unknown>, RawRankedRow> {
    const key = `${temporal}:${ridInMatch}`;
    let stmt = this.statements.get(key);
    if (!stmt) {
      stmt = this.db.prepare<Record<string, unknown>, RawRankedRow>(rankedSearchSql(temporal, ridInMatch)).raw(true);
      this.statements.set(key, stmt);
    }
    return stmt;
  }
}
