/**
 * Text benchmark: scoped keyword search (scopes of 1, 10 and 1,000 resources) over a synthetic corpus of
 * 100,000 chunks, through the FTS5 adapter and through the service layer (adapter + hydration + leak
 * guard), each as a ratio to the same raw SQLite FTS5 statement run directly, measured in the same run.
 * BENCH_SCALE scales the chunk count (default 1 = 100,000; CI can run 0.05); resources stay >= 1,000.
 */
import { openSqliteDatabase } from "../src/adapters/sqlite/sqlite-database.js";
import { SqliteDocumentStore } from "../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend, rankedSearchSql, scopedMatch } from "../src/adapters/sqlite/fts5-text-backend.js";
import type { ResourceScope } from "../src/domain/scope.js";
import { createScopedBackendView } from "../src/domain/scoped-backend-view.js";
import { searchText } from "../src/server/text-search.js";

const WORDS_PER_CHUNK = 40;
const VOCABULARY = 5000;
const ROUNDS = 5;
const QUERIES = 20;

/** A small deterministic generator (mulberry32), so every run indexes the same text. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ["ka", "lo", "mi", "ner", "ta", "vo", "shi", "ru", "pen", "dal", "gor", "eth", "quin", "zu", "bar", "fel"];

function word(i: number): string {
  let s = "";
  let n = i + 1;
  while (n > 0) {
    s += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return s;
}

/** Zipf-like word picker: rank r drawn with probability ~ 1/r. */
function zipf(rand: () => number): number {
  return Math.min(VOCABULARY - 1, Math.floor(Math.exp(rand() * Math.log(VOCABULARY))) - 1);
}

function ulidFor(i: number): string {
  return `01J${i.toString(32).toUpperCase().replace(/[ILOU]/g, "X").padStart(23, "0")}`;
}

function view(resourceIds: string[]) {
  const scope: ResourceScope = {
    scopeId: "01JBENCH000000000000000000",
    owner: "bench",
    resourceIds: [...resourceIds].sort(),
    projectNames: ["local/bench"],
    temporalScope: "current",
    includeResources: [],
    excludeResources: [],
    includePaths: [],
    excludePaths: [],
    parentScopeId: "",
    expandDescendants: true,
    deniedResourceIds: [],
    createdAt: new Date(0),
  };
  return createScopedBackendView(scope);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function timeEach(queries: string[], fn: (q: string) => unknown): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const q of queries) {
      const t0 = performance.now();
      await fn(q);
      times.push(performance.now() - t0);
    }
  }
  return median(times);
}

/** Runs the text benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const chunks = Math.max(5000, Math.round(100_000 * scale));
  const resources = Math.max(1000, Math.round(chunks / 50));
  const db = openSqliteDatabase(":memory:");
  const store = new SqliteDocumentStore(db);
  const backend = new Fts5TextBackend(db);
  const rand = rng(42);
  const ids = Array.from({ length: resources }, (_, i) => ulidFor(i));

  const t0 = performance.now();
  const perResource = Math.ceil(chunks / resources);
  for (let r = 0; r < resources; r++) {
    const docs = [];
    for (let d = 0; d < perResource; d++) {
      const words: string[] = [];
      for (let w = 0; w < WORDS_PER_CHUNK; w++) words.push(word(zipf(rand)));
      const text = words.join(" ");
      docs.push({ path: `docs/${d}.md`, content: text, metadata: { n: String(d) }, chunks: [{ text }] });
    }
    store.upsertDocuments(ids[r], docs, 1);
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  process.stdout.write(`indexed ${resources * perResource} chunks in ${resources} resources in ${loadSeconds.toFixed(1)} s\n`);

  const qrand = rng(7);
  const queries = Array.from({ length: QUERIES }, () => `${word(20 + Math.floor(qrand() * 400))} ${word(5 + Math.floor(qrand() * 100))} ${word(Math.floor(qrand() * 2000))}`);
  const raw = db.prepare(rankedSearchSql("current"));
  const deps = { text: backend, documents: store, maxResultsCap: 1000, recentWindowMs: 0 };

  process.stdout.write("scope  raw FTS5 (ms)  adapter/raw  service/raw\n");
  for (const size of [1, 10, 1000]) {
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
