/**
 * Text benchmark: scoped keyword search (scopes of 1, 10, 100, 1,000 and all resources) over a synthetic corpus of
 * 100,000 chunks, through the FTS5 adapter and through the service layer (adapter + hydration + leak
 * guard), each as a ratio to the same raw SQLite FTS5 statement run directly, measured in the same run.
 * BENCH_SCALE scales the chunk count (default 1 = 100,000; CI can run 0.05); resources stay >= 1,000.
 */
import { openSqliteDatabase } from "../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend, rankedSearchSql, scopedMatch } from "../src/adapters/sqlite/fts5-text-backend.js";
import { searchText } from "../src/application/search/text-search.js";
import { prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
import { median, sampleTimes } from "./bench-timing.js";
import { syntheticUlid, syntheticWord, zipfRank } from "./synthetic-corpus.js";

const WORDS_PER_CHUNK = 40;
const VOCABULARY = 5000;
const ROUNDS = 5;
const QUERIES = 20;

function view(resourceIds: string[]) {
  return viewOver(resourceIds, { scopeId: "01JBENCH000000000000000000", owner: "bench", projectNames: ["local/bench"] });
}

async function timeEach(queries: string[], fn: (q: string) => unknown): Promise<number> {
  return median(await sampleTimes(ROUNDS, queries.length, (i) => fn(queries[i])));
}

/** Runs the text benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const chunks = Math.max(5000, Math.round(100_000 * scale));
  const resources = Math.max(1000, Math.round(chunks / 50));
  const db = openSqliteDatabase(":memory:");
  const store = new SqliteDocumentStore(db);
  const backend = new Fts5TextBackend(db);
  const rand = prng(42);
  const ids = Array.from({ length: resources }, (_, i) => syntheticUlid(i));

  const t0 = performance.now();
  const perResource = Math.ceil(chunks / resources);
  for (let r = 0; r < resources; r++) {
    const docs = [];
    for (let d = 0; d < perResource; d++) {
      const words: string[] = [];
      for (let w = 0; w < WORDS_PER_CHUNK; w++) words.push(syntheticWord(zipfRank(rand, VOCABULARY)));
      const text = words.join(" ");
      docs.push({ path: `docs/${d}.md`, content: text, metadata: { n: String(d) }, chunks: [{ text }] });
    }
    await store.upsertDocuments(ids[r], docs, 1);
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  process.stdout.write(`indexed ${resources * perResource} chunks in ${resources} resources in ${loadSeconds.toFixed(1)} s\n`);

  const qrand = prng(7);
  const queries = Array.from(
    { length: QUERIES },
    () =>
      `${syntheticWord(20 + Math.floor(qrand() * 400))} ${syntheticWord(5 + Math.floor(qrand() * 100))} ${syntheticWord(Math.floor(qrand() * 2000))}`,
  );
  const raw = db.prepare(rankedSearchSql("current"));
  const deps = { text: backend, documents: store, maxResultsCap: 1000, recentWindowMs: 0 };

  process.stdout.write("scope  raw FTS5 (ms)  adapter/raw  service/raw\n");
  for (const size of [1, 10, 100, 1000, resources]) {
    const scopeIds = ids.filter((_, i) => i % Math.floor(resources / size) === 0).slice(0, size);
    const v = view(scopeIds);
    const rids = JSON.stringify(v.resourceIds);
    const rawMs = await timeEach(queries, (q) => raw.all({ match: scopedMatch(q, v.resourceIds), rids, cutoff: 0, limit: 20, offset: 0 }));
    const adapterMs = await timeEach(queries, (q) => backend.search(v, q, { maxResults: 20, now: 2, recentWindowMs: 0 }));
    const serviceMs = await timeEach(queries, (q) => searchText(deps, v, { query: q, maxResults: 20 }));
    process.stdout.write(
      `${String(size).padStart(5)}  ${rawMs.toFixed(3).padStart(13)}  ${(adapterMs / rawMs).toFixed(2).padStart(11)}  ${(serviceMs / rawMs).toFixed(2).padStart(11)}\n`,
    );
  }
  db.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
