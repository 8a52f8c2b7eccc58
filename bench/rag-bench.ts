/**
 * RAG benchmark: hybrid search latency against the sum of its sources' latencies, measured in the same
 * run on the same data: keyword (FTS5), vector (embedded partitioned index) and graph expansion
 * (Oxigraph) each run alone, then HybridSearch runs all three concurrently and fuses them. The figure
 * `hybrid / (text + vector + graph)` is the fusion's overhead (plus concurrency's gain when it is below 1);
 * `hybrid / slowest source` shows how much of the sources' work overlaps (1.0 would be perfect overlap).
 * It also compares the in-memory BM25 fallback's keyword search with FTS5's on the same corpus.
 *
 * Data: BENCH_SCALE x 20,000 chunks (default 1) of Zipf-distributed synthetic words in 100 resources,
 * 64-dimension embeddings, and one labelled graph node per document linked to it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryBm25TextBackend } from "../src/adapters/kit/bm25/memory-bm25-text-backend.js";
import { loadVectors } from "../src/adapters/kit/vectors/load-vectors.js";
import { PartitionedVectorBackend } from "../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { OxigraphGraphBackend } from "../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { openSqliteDatabase } from "../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend } from "../src/adapters/sqlite/fts5-text-backend.js";
import { SqliteUnitReader } from "../src/adapters/sqlite/sqlite-unit-reader.js";
import type { RdfTriple } from "../src/domain/rdf-term.js";
import { formatUkoUri } from "../src/domain/uko-uri.js";
import { findGraphEvidence } from "../src/application/rag/graph-evidence.js";
import { checkHybridRequest } from "../src/application/rag/hybrid-request.js";
import { hybridSearch, type HybridSearchDeps } from "../src/application/rag/hybrid-search.js";
import { searchText } from "../src/application/search/text-search.js";
import { searchVectors } from "../src/application/search/vector-search.js";
import { prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
import { median, sampleTimes } from "./bench-timing.js";
import { syntheticUlid, syntheticWord, zipfRank } from "./synthetic-corpus.js";

const DIM = 64;
const RESOURCES = 100;
const CHUNKS_PER_DOC = 4;
const VOCABULARY = 3000;
const WORDS_PER_CHUNK = 30;
const QUERIES = 30;
const ROUNDS = 3;

const word = (r: () => number) => syntheticWord(zipfRank(r, VOCABULARY));

function vectorOf(r: () => number): Float32Array {
  return Float32Array.from({ length: DIM }, () => r() * 2 - 1);
}

/** Runs the RAG benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1");
  const chunks = Math.max(400, Math.round(20_000 * scale));
  const docs = Math.ceil(chunks / CHUNKS_PER_DOC);
  const dir = mkdtempSync(join(tmpdir(), "acms-rag-bench-"));
  const db = openSqliteDatabase(":memory:");
  const documents = new SqliteDocumentStore(db);
  const units = new SqliteUnitReader(db);
  const vector = new PartitionedVectorBackend({ dimension: DIM });
  const graph = await OxigraphGraphBackend.open({ path: join(dir, "graph.db") });
  try {
    const r = prng(42);
    const resources = Array.from({ length: RESOURCES }, (_, i) => syntheticUlid(i + 1));
    const t0 = performance.now();
    const triplesByResource = new Map<string, RdfTriple[]>();
    for (let d = 0; d < docs; d++) {
      const res = resources[d % RESOURCES];
      const path = `docs/d${d}.md`;
      const texts = Array.from({ length: CHUNKS_PER_DOC }, () => Array.from({ length: WORDS_PER_CHUNK }, () => word(r)).join(" "));
      await documents.upsertDocuments(
        res,
        [{ path, content: texts.join("\n"), metadata: {}, chunks: texts.map((text) => ({ text, embedding: vectorOf(r) })) }],
        1_000,
      );
      const node = { kind: "iri" as const, value: `http://example.org/topic/${d}` };
      const list = triplesByResource.get(res) ?? [];
      list.push(
        {
          subject: node,
          predicate: { kind: "iri", value: "http://www.w3.org/2000/01/rdf-schema#label" },
          object: { kind: "literal", value: `${word(r)} ${word(r)}` },
        },
        {
          subject: node,
          predicate: { kind: "iri", value: "http://example.org/describes" },
          object: { kind: "iri", value: formatUkoUri(res, path) },
        },
      );
      triplesByResource.set(res, list);
    }
    for (const [res, triples] of triplesByResource) await graph.putTriples(res, triples, true);
    await loadVectors(vector, documents.iterateVectors());
    process.stdout.write(
      `corpus: ${chunks} chunks in ${docs} documents, ${RESOURCES} resources, ${docs * 2} triples (${((performance.now() - t0) / 1000).toFixed(1)} s to load)\n`,
    );

    const view = viewOver(resources, { scopeId: "01JBENCH000000000000000000", owner: "bench", projectNames: ["local/bench"] });
    const text = new Fts5TextBackend(db);
    const deps: HybridSearchDeps = {
      documents,
      text,
      vector,
      graph,
      units,
      embeddingDim: DIM,
      maxResultsCap: 1000,
      recentWindowMs: 60_000,
      sparqlTimeoutMs: 10_000,
    };
    const qr = prng(7);
    const queries = Array.from({ length: QUERIES }, () => ({
      query: `${word(qr)} ${syntheticWord(Math.floor(qr() * 200))}`,
      embedding: Array.from(vectorOf(qr)),
    }));
    const req = (q: number) => ({ query: queries[q].query, embedding: queries[q].embedding, sources: [], weights: [] });
    const plan = checkHybridRequest(req(0), { embeddingDim: DIM, maxResultsCap: 1000, hasGraph: true, hasVector: true });
    const limits = { maxResultsCap: 1000, recentWindowMs: 60_000 };

    // Warm up every path once (statements prepared, graph worker loaded).
    await hybridSearch(deps, view, req(0));

    const textMs = await sampleTimes(ROUNDS, QUERIES, (q) =>
      searchText({ ...limits, text, documents }, view, { query: queries[q].query, maxResults: plan.depth }),
    );
    const vectorMs = await sampleTimes(ROUNDS, QUERIES, (q) =>
      searchVectors({ ...limits, vector, documents, embeddingDim: DIM }, view, {
        embedding: queries[q].embedding,
        topK: plan.depth,
        minScore: 0,
      }),
    );
    const graphMs = await sampleTimes(ROUNDS, QUERIES, (q) =>
      findGraphEvidence(graph, view, queries[q].query, { depth: plan.depth, timeoutMs: 10_000 }),
    );
    const hybridMs = await sampleTimes(ROUNDS, QUERIES, (q) => hybridSearch(deps, view, req(q)));

    const [mt, mv, mg, mh] = [median(textMs), median(vectorMs), median(graphMs), median(hybridMs)];
    const sum = mt + mv + mg;
    process.stdout.write(`top_k ${plan.topK}, each source ${plan.depth} deep; medians over ${QUERIES * ROUNDS} queries:\n`);
    process.stdout.write(`  text ${mt.toFixed(2)} ms, vector ${mv.toFixed(2)} ms, graph ${mg.toFixed(2)} ms, sum ${sum.toFixed(2)} ms\n`);
    process.stdout.write(`  hybrid ${mh.toFixed(2)} ms\n`);
    process.stdout.write(
      `  hybrid / sum of sources: ${(mh / sum).toFixed(2)}x;  hybrid / slowest source: ${(mh / Math.max(mt, mv, mg)).toFixed(2)}x\n`,
    );

    const memory = new MemoryBm25TextBackend({ generation: () => documents.generation(), snapshotChunks: () => units.snapshotChunks() });
    const buildStart = performance.now();
    await memory.search(view, "warm", { maxResults: 1, now: 2_000, recentWindowMs: 60_000 });
    const buildMs = performance.now() - buildStart;
    const opts = { maxResults: plan.depth, now: 2_000, recentWindowMs: 60_000 };
    const ftsMs = await sampleTimes(ROUNDS, QUERIES, (q) => text.search(view, queries[q].query, opts));
    const memMs = await sampleTimes(ROUNDS, QUERIES, (q) => memory.search(view, queries[q].query, opts));
    process.stdout.write(
      `keyword fallback: in-memory BM25 ${median(memMs).toFixed(2)} ms vs FTS5 ${median(ftsMs).toFixed(2)} ms per query (${(median(memMs) / median(ftsMs)).toFixed(2)}x); index build ${buildMs.toFixed(0)} ms\n`,
    );
  } finally {
    await graph.close();
    await vector.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
