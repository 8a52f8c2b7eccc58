/**
 * Graph on a SPARQL endpoint: the SPARQL 1.1 Protocol adapter on a throw-away Virtuoso (started here with
 * the test helper) beside the embedded Oxigraph, on the same data, measured in the same run:
 * - load: putTriples of every graph (LOAD_WRITERS of them in flight, as concurrent PutTriples calls would be)
 *   until the data is queryable, triples per second on each engine (on Oxigraph: every write durable, then
 *   a start-up, whose bulk loader makes the store queryable far sooner than the worker's write replay);
 *   and the start-up of each until a query answers;
 * - scoped 1-hop and 2-hop queries, GetTriples and a depth-2 Traverse, per scope size (1, 10, every graph), on
 *   Oxigraph and on the endpoint;
 * - the service's overhead on the endpoint: the adapter's query (inspection, scope check, dataset,
 *   streamed parse, term conversion) over the same query and dataset posted raw to the endpoint over the
 *   same kept-alive, authenticated connection, its body read as text.
 *
 * Data: BENCH_SCALE x 1,000,000 triples over 1,000 graphs (fewer below BENCH_SCALE 0.1: 10,000 x BENCH_SCALE, at least 20) (persons with a name, an age and two "knows"
 * edges, deterministic). BENCH_ONLY=graph-endpoint runs only this one.
 */
import { setMaxListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OxigraphGraphBackend } from "../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { SparqlEndpointGraphBackend } from "../src/adapters/sparql-endpoint/sparql-endpoint-graph-backend.js";
import { SparqlHttpClient } from "../src/adapters/sparql-endpoint/sparql-http-client.js";
import type { RdfTriple } from "../src/domain/rdf-term.js";
import type { ScopedBackendView } from "../src/domain/scoped-backend-view.js";
import { graphIri } from "../src/domain/uko-uri.js";
import type { GraphBackend } from "../src/ports/graph-backend.js";
import { startVirtuoso } from "../test/support/engines/virtuoso.js";
import { prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
import { formatMs, median, sampleTimes } from "./bench-timing.js";

/** Graphs at BENCH_SCALE 1; a smaller scale has fewer (at least 20), so a smoke run stays short. */
const FULL_GRAPHS = 1000;
const EX = "http://example.org/";
const XSD_INT = "http://www.w3.org/2001/XMLSchema#integer";
const OPTS = { timeoutMs: 600_000 };

function resourceId(i: number): string {
  return `01JENDPT${String(i).padStart(18, "0")}`;
}

function graphTriples(r: number, people: number, rnd: () => number): RdfTriple[] {
  const person = (i: number) => ({ kind: "iri" as const, value: `${EX}r${r}/p${i}` });
  const out: RdfTriple[] = [];
  for (let i = 0; i < people; i++) {
    out.push({
      subject: person(i),
      predicate: { kind: "iri", value: `${EX}name` },
      object: { kind: "literal", value: `Person ${r}-${i}`, language: "en" },
    });
    out.push({
      subject: person(i),
      predicate: { kind: "iri", value: `${EX}age` },
      object: { kind: "literal", value: String(18 + (i % 60)), datatype: XSD_INT },
    });
    for (let k = 0; k < 2; k++)
      out.push({ subject: person(i), predicate: { kind: "iri", value: `${EX}knows` }, object: person(Math.floor(rnd() * people)) });
  }
  return out;
}

function viewOf(ids: string[]): ScopedBackendView {
  return viewOver(ids, { scopeId: "01JBENCHSCOPE0000000000000", owner: "bench", projectNames: ["local/bench"] });
}

async function timed(runs: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 2; i++) await fn();
  return median(await sampleTimes(1, runs, fn));
}

/**
 * putTriples calls in flight during the load. Why more than one: the endpoint spends most of a write in
 * its own commit, so concurrent writes of different resources (as concurrent PutTriples calls are) load
 * several times faster than one at a time; Oxigraph's putTriples commits synchronously, so it is the same
 * loop for it, just sequential.
 */
const LOAD_WRITERS = 4;

/** Writes every graph through putTriples (replace), LOAD_WRITERS at a time; the time until all resolved. */
async function writeAll(backend: GraphBackend, ids: string[], data: RdfTriple[][]): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const writer = async () => {
    while (next < ids.length) {
      const r = next++;
      await backend.putTriples(ids[r], data[r], true);
    }
  };
  await Promise.all(Array.from({ length: LOAD_WRITERS }, writer));
  return performance.now() - t0;
}

/** One query answered (the data is queryable). */
async function queryable(backend: GraphBackend, ids: string[]): Promise<void> {
  await backend.query(viewOf(ids.slice(-1)), "ASK { ?s ?p ?o }", OPTS);
}

/** Runs the endpoint graph benchmark and prints its table. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const graphs = Math.max(20, Math.min(FULL_GRAPHS, Math.round(FULL_GRAPHS * Math.min(1, scale * 10))));
  const people = Math.max(2, Math.round((scale * 1_000_000) / graphs / 4));
  const rnd = prng(7);
  const ids = Array.from({ length: graphs }, (_, i) => resourceId(i));
  const data = ids.map((_, r) => graphTriples(r, people, rnd));
  const total = data.reduce((n, d) => n + d.length, 0);
  const dir = mkdtempSync(join(tmpdir(), "acms-endpoint-bench-"));
  // About 700 MB of page buffers (the test instances' 160 MB would page a million triples to disk).
  const virtuoso = await startVirtuoso({ buffers: 85_000 });
  // One query worker and no spare: the pool's extra copies (each applies every write) measure the pool,
  // not the engine, and would triple the load's work and memory; queries here run one at a time anyway.
  const oxigraphOptions = { path: join(dir, "graph.db"), workers: 1, spares: 0 };
  const endpoint = await SparqlEndpointGraphBackend.open({
    queryUrl: virtuoso.authQueryUrl,
    updateUrl: virtuoso.authQueryUrl,
    user: virtuoso.user,
    password: virtuoso.password,
  });
  const raw = new SparqlHttpClient({ user: virtuoso.user, password: virtuoso.password, maxSockets: 4 });
  let oxigraph: OxigraphGraphBackend | undefined;
  try {
    // Oxigraph: putTriples commits to SQLite and posts each write to the worker's in-memory store, which
    // lags behind a bulk load (a million triples took it past any sane deadline on a loaded machine); the
    // fast path to a queryable store is a start-up, whose worker loads the file with Oxigraph's bulk
    // N-Quads loader. So: every putTriples durable, the writer closed, a fresh open until a query answers.
    const writer = await OxigraphGraphBackend.open(oxigraphOptions);
    const oxPut = await writeAll(writer, ids, data);
    await writer.close();
    const t0 = performance.now();
    const store = await OxigraphGraphBackend.open(oxigraphOptions);
    oxigraph = store;
    await queryable(store, ids);
    const oxStart = performance.now() - t0;
    const oxLoad = oxPut + oxStart;
    const rate = (ms: number) => `${Math.round(total / (ms / 1000))} triples/s`;
    const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    // Each figure is printed as soon as it is measured, so a run cut short still reports what it measured.
    process.stdout.write(
      `data: ${total} triples in ${graphs} graphs (Virtuoso Open Source 7 on loopback, digest auth)\n` +
        `load until queryable (putTriples per graph, replace, ${LOAD_WRITERS} in flight): Oxigraph ${rate(oxLoad)} (${sec(oxLoad)}: putTriples ${sec(oxPut)} + start-up bulk load ${sec(oxStart)})\n`,
    );
    // The endpoint: a write is queryable when putTriples resolves, and a start-up reads one triple.
    const t1 = performance.now();
    const epPut = await writeAll(endpoint, ids, data);
    await queryable(endpoint, ids);
    const epLoad = performance.now() - t1;
    const t2 = performance.now();
    const reopened = await SparqlEndpointGraphBackend.open({
      queryUrl: virtuoso.authQueryUrl,
      updateUrl: virtuoso.authQueryUrl,
      user: virtuoso.user,
      password: virtuoso.password,
    });
    await queryable(reopened, ids);
    const epStart = performance.now() - t2;
    await reopened.close();
    process.stdout.write(
      `load until queryable: endpoint ${rate(epLoad)} (${sec(epLoad)}: putTriples ${sec(epPut)}) = ${(epLoad / oxLoad).toFixed(2)}x Oxigraph's time\n` +
        `start-up until queryable: Oxigraph ${sec(oxStart)} (reloads every triple); endpoint ${formatMs(epStart)} (reloads nothing) = ${(epStart / oxStart).toFixed(4)}x\n`,
    );

    const scopes: [string, string[]][] = [
      ["1 graph", ids.slice(0, 1)],
      ["10 graphs", ids.slice(0, 10)],
      [`all ${graphs}`, ids],
    ];
    const queries: [string, string][] = [
      ["1-hop", `SELECT ?b { <${EX}r0/p1> <${EX}knows> ?b }`],
      ["2-hop", `SELECT ?c { <${EX}r0/p1> <${EX}knows> ?b . ?b <${EX}knows> ?c }`],
    ];
    const url = new URL(virtuoso.authQueryUrl);
    const runs = 9;
    process.stdout.write(
      "query | scope | Oxigraph backend | endpoint backend | raw endpoint POST | endpoint/Oxigraph | service overhead (backend/raw)\n",
    );
    for (const [qname, q] of queries) {
      for (const [sname, scope] of scopes) {
        const view = viewOf(scope);
        const graphs = scope.map(graphIri);
        const body = [
          `query=${encodeURIComponent(q)}`,
          ...graphs.map((g) => `default-graph-uri=${encodeURIComponent(g)}`),
          ...graphs.map((g) => `named-graph-uri=${encodeURIComponent(g)}`),
        ].join("&");
        const rawOnce = async () => {
          const res = await raw.send({
            url,
            body,
            accept: "application/sparql-results+json",
            kind: "query",
            deadline: Date.now() + 600_000,
          });
          res.message.setEncoding("utf8");
          let text = "";
          for await (const chunk of res.message) text += chunk as string;
          res.done();
          return text;
        };
        const ox = await timed(runs, () => store.query(view, q, OPTS));
        const ep = await timed(runs, () => endpoint.query(view, q, OPTS));
        const base = await timed(runs, rawOnce);
        process.stdout.write(
          `${qname} | ${sname} | ${formatMs(ox)} | ${formatMs(ep)} | ${formatMs(base)} | ${(ep / ox).toFixed(2)}x | ${(ep / base).toFixed(2)}x\n`,
        );
      }
    }
    for (const [sname, scope] of scopes) {
      const view = viewOf(scope);
      const ox = await timed(runs, () => store.getTriples(view, `${EX}r0/p1`, OPTS));
      const ep = await timed(runs, () => endpoint.getTriples(view, `${EX}r0/p1`, OPTS));
      process.stdout.write(`GetTriples | ${sname} | ${formatMs(ox)} | ${formatMs(ep)} | - | ${(ep / ox).toFixed(2)}x | -\n`);
    }
    for (const [sname, scope] of scopes) {
      const view = viewOf(scope);
      const ox = await timed(runs, () => store.traverse(view, `${EX}r0/p1`, 2, OPTS));
      const ep = await timed(runs, () => endpoint.traverse(view, `${EX}r0/p1`, 2, OPTS));
      process.stdout.write(`Traverse depth 2 | ${sname} | ${formatMs(ox)} | ${formatMs(ep)} | - | ${(ep / ox).toFixed(2)}x | -\n`);
    }
    await fairSharing(endpoint, ids, (sql) => virtuoso.sql(sql));
  } finally {
    raw.close();
    await endpoint.close();
    await oxigraph?.close();
    await virtuoso.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Fair sharing on the endpoint (issue 24, finding 11): tenant A floods with 20 slow queries (a 6-way
 * product, a 20 s time limit) on the default 8 endpoint slots; tenant B asks small ASKs one after another.
 * B's answer time against B's ASK on an idle endpoint (same run), the preemptions of A it took, the most
 * HTTP requests Virtuoso worked on meanwhile (`http_pending_req()`, asked as dba: A's running queries and
 * the stopped ones that still count against A, at most the 8 slots, plus B's), and, once A's calls are
 * cancelled, how long Virtuoso took to stop working on them: when it notices the client left, or at the
 * latest at the limit the service handed it with each query.
 */
async function fairSharing(endpoint: SparqlEndpointGraphBackend, ids: string[], sql: (s: string) => string): Promise<void> {
  const ask = () => endpoint.query(viewOf([ids[0]]), `ASK { ?s <${EX}name> ?n }`, { ...OPTS, tenant: "b" });
  const pending = () => Number(/(\d+)\s*$/.exec(sql("select length (http_pending_req());\n").trim())?.[1] ?? "0");
  const idle = await timed(9, ask);
  const slow = "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r }";
  const stop = new AbortController();
  setMaxListeners(21, stop.signal);
  const flood = Array.from({ length: 20 }, () =>
    endpoint.query(viewOf([ids[0]]), slow, { timeoutMs: 20_000, tenant: "a", signal: stop.signal }).catch(() => undefined),
  );
  await new Promise((r) => setTimeout(r, 300));
  const before = endpoint.preemptions;
  let most = 0;
  const waits = await sampleTimes(1, 9, async () => {
    await ask();
    most = Math.max(most, pending());
  });
  const t0 = performance.now();
  stop.abort();
  await Promise.all(flood);
  let firstDrop: number | undefined;
  const atCancel = pending();
  for (let n = atCancel; n > 0; n = pending()) {
    if (firstDrop === undefined && n < atCancel) firstDrop = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
  }
  const stopped = performance.now() - t0;
  const busy = median(waits);
  process.stdout.write(
    `fair sharing: B's ASK while A floods the endpoint (20 slow queries, 8 slots): median ${formatMs(busy)}, max ${formatMs(Math.max(...waits))} ` +
      `against ${formatMs(idle)} idle (${(busy / idle).toFixed(1)}x; ${endpoint.preemptions - before} preemptions of A, slice 250 ms); ` +
      `at most ${most} HTTP requests on Virtuoso meanwhile\n` +
      `cancelled queries stopped on Virtuoso: ${atCancel} pending at the cancel, the first gone after ${firstDrop === undefined ? "-" : formatMs(firstDrop)}, ` +
      `none after ${formatMs(stopped)} (A's limit: 20 s)\n`,
  );
}
