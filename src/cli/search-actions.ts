import { readFileSync } from "node:fs";
import { SparqlQueryResponseSchema, TermKind, type Term } from "../../gen/acms/v1/graph_pb.js";
import { HybridSearchResponseSchema, Source } from "../../gen/acms/v1/rag_pb.js";
import { SimilaritySearchResponseSchema } from "../../gen/acms/v1/vector_pb.js";
import { outputWidth, type CliIo } from "./cli-io.js";
import { CliUsageError } from "./cli-usage-error.js";
import { requireScope, type ConnectedBody } from "./connection-options.js";
import { formatTable } from "./format-table.js";
import { printRanked } from "./print-ranked.js";
import { parseIntFlag, parseNumberFlag } from "./parse-numbers.js";
import { printMessageJson } from "./print-json.js";
import { readEmbedding } from "./read-embedding.js";

function termText(t: Term | undefined): string {
  if (!t) return "";
  switch (t.kind) {
    case TermKind.IRI:
      return `<${t.value}>`;
    case TermKind.BLANK:
      return `_:${t.value}`;
    case TermKind.LITERAL:
      return t.language
        ? `"${t.value}"@${t.language}`
        : t.datatype && !t.datatype.endsWith("#string")
          ? `"${t.value}"^^<${t.datatype}>`
          : `"${t.value}"`;
    default:
      return t.value;
  }
}

const SOURCES: Record<string, Source> = { text: Source.TEXT, vector: Source.VECTOR, graph: Source.GRAPH };

function parseSources(raw: string | undefined): Source[] {
  if (raw === undefined) return [];
  return raw
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s.length > 0)
    .map((s) => {
      const source = SOURCES[s];
      if (source === undefined) throw new CliUsageError(`--sources: unknown source "${s}" (text, vector, graph)`);
      return source;
    });
}

function readQuery(raw: string): string {
  if (!raw.startsWith("@")) return raw;
  try {
    return readFileSync(raw.slice(1), "utf8");
  } catch (err) {
    throw new CliUsageError(`cannot read ${raw.slice(1)}: ${(err as Error).message}`);
  }
}

/** The body of `acms search vector`. */
export const searchVector =
  (io: CliIo): ConnectedBody<[string[]]> =>
  async ({ conn, client, cmd }, words) => {
    requireScope(conn);
    const o = cmd.opts<{ embedding?: string; topK?: string; minScore?: string }>();
    const text = words.join(" ");
    if (text.trim().length > 0 && o.embedding !== undefined) throw new CliUsageError("give the query text or --embedding, not both");
    if (text.trim().length === 0 && o.embedding === undefined)
      throw new CliUsageError("give the query text (the server embeds it) or --embedding");
    const res = await client.vector.similaritySearch({
      ...(o.embedding !== undefined ? { embedding: readEmbedding(o.embedding) } : { text }),
      topK: parseIntFlag("--top-k", o.topK),
      minScore: parseNumberFlag("--min-score", o.minScore),
    });
    if (conn.json) printMessageJson(io, SimilaritySearchResponseSchema, res);
    else printRanked(io, res.results, text);
  };

/** The body of `acms search graph`. */
export const searchGraph =
  (io: CliIo): ConnectedBody<[string]> =>
  async ({ conn, client }, raw) => {
    requireScope(conn);
    const res = await client.graph.sparqlQuery({ query: readQuery(raw) });
    if (conn.json) {
      printMessageJson(io, SparqlQueryResponseSchema, res);
      return;
    }
    const width = outputWidth(io);
    if (res.variables.length > 0) {
      const rows = res.rows.map((r) => res.variables.map((v) => termText(r.bindings[v])));
      io.stdout.write(
        formatTable(
          res.variables.map((v) => `?${v}`),
          rows,
          width,
        ),
      );
      io.stdout.write(`${res.rows.length} row${res.rows.length === 1 ? "" : "s"}\n`);
    } else if (res.triples.length > 0) {
      const rows = res.triples.map((t) => [termText(t.subject), termText(t.predicate), termText(t.object)]);
      io.stdout.write(formatTable(["SUBJECT", "PREDICATE", "OBJECT"], rows, width));
      io.stdout.write(`${res.triples.length} triple${res.triples.length === 1 ? "" : "s"}\n`);
    } else if (/^\s*(PREFIX\s+\S+\s+<[^>]*>\s*|BASE\s+<[^>]*>\s*)*ASK\b/i.test(readQuery(raw))) {
      io.stdout.write(`${res.boolean}\n`);
    } else {
      io.stdout.write("no results\n");
    }
  };

/** The body of `acms search hybrid`. */
export const searchHybrid =
  (io: CliIo): ConnectedBody<[string[]]> =>
  async ({ conn, client, cmd }, words) => {
    requireScope(conn);
    const query = words.join(" ");
    const o = cmd.opts<{ embedding?: string; sources?: string; topK?: string; minScore?: string; rrfK?: string }>();
    const res = await client.rag.hybridSearch({
      query,
      embedding: o.embedding === undefined ? [] : readEmbedding(o.embedding),
      sources: parseSources(o.sources),
      topK: parseIntFlag("--top-k", o.topK),
      minScore: parseNumberFlag("--min-score", o.minScore),
      rrfK: parseIntFlag("--rrf-k", o.rrfK),
    });
    if (conn.json) {
      printMessageJson(io, HybridSearchResponseSchema, res);
      return;
    }
    const failed = res.failedSources.map((s) => Source[s].toLowerCase());
    printRanked(io, res.results, query, failed.length > 0 ? `partial: ${failed.join(", ")} failed` : undefined);
  };
