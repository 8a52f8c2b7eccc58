/**
 * Graph benchmark: scoped SPARQL through the Oxigraph graph backend (query inspection, scope check, a
 * worker thread, lossless result conversion) against a raw Oxigraph `store.query` on the same quads in
 * the main thread, measured in the same run, as latency ratios. The raw baseline is given the same
 * dataset (default graph = union of the scope's graphs, named graphs = the same list), so the ratio is
 * the cost of isolation and of never blocking the event loop, not of a different query plan. It also
 * reports write and restart (reload from SQLite) throughput.
 *
 * Data: BENCH_SCALE x 20,000 triples spread over 100 resources (a "knows" graph with names and ages per
 * resource, deterministic). Scopes: 1 resource, 10 resources, all 100.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store, literal, namedNode, quad } from "oxigraph";
import { DEFAULT_GRAPH_SLICE_MS, OxigraphGraphBackend } from "../src/adapters/oxigraph/oxigraph-graph-backend.js";
import type { RdfTriple } from "../src/domain/rdf-term.js";
import type { ScopedBackendView } from "../src/domain/scoped-backend-view.js";
import { graphIri } from "../src/domain/uko-uri.js";
import { prng } from "../test/support/prng.js";
import { viewOver } from "../test/support/view-over.js";
import { median as medianOf, sampleTimes } from "./bench-timing.js";

const RESOURCES = 100;
const EX = "http://example.org/";
const XSD_INT = "http://www.w3.org/2001/XMLSchema#integer";

function resourceId(i: number): string {
  return `01JGRAPH${String(i).padStart(18, "0")}`;
}

/** One resource's triples: `people` persons, each with a name, an age and two "knows" edges. */
function resourceTriples(r: number, people: number, rnd: () => number): RdfTriple[] {
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
    for (let k = 0; k < 2; k++) {
      out.push({ subject: person(i), predicate: { kind: "iri", value: `${EX}knows` }, object: person(Math.floor(rnd() * people)) });
    }
  }
  return out;
}

function viewOf(ids: string[]): ScopedBackendView {
  return viewOver(ids, { scopeId: "01JBENCHSCOPE0000000000000", owner: "bench", projectNames: ["local/bench"] });
}

function toOx(t: RdfTriple["object"]) {
  if (t.kind === "iri") return namedNode(t.value);
  return t.language ? literal(t.value, t.language) : literal(t.value, t.datatype ? namedNode(t.datatype) : undefined);
}

async function median(runs: number, fn: () => unknown | Promise<unknown>): Promise<number> {
  return medianOf(await sampleTimes(1, runs, fn));
}

const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} us` : `${ms.toFixed(2)} ms`);

/** Runs the graph benchmark and prints one line per (query, scope). */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const people = Math.max(2, Math.round((scale * 20_000) / RESOURCES / 4));
  const rnd = prng(42);
  const ids = Array.from({ length: RESOURCES }, (_, i) => resourceId(i));
  const data = ids.map((_, r) => resourceTriples(r, people, rnd));
  const total = data.reduce((n, d) => n + d.length, 0);
  const dir = mkdtempSync(join(tmpdir(), "acms-graph-bench-"));
  const path = join(dir, "graph.db");
  try {
    let backend = await OxigraphGraphBackend.open({ path });
    const w0 = performance.now();
    for (let r = 0; r < RESOURCES; r++) await backend.putTriples(ids[r], data[r], true);
    await backend.query(viewOf([ids[0]]), "ASK { ?s ?p ?o }", { timeoutMs: 600_000 });
    const writeMs = performance.now() - w0;

    const r0 = performance.now();
    const quads = data.flatMap((d, r) =>
      d.map((t) => quad(namedNode(t.subject.value), namedNode(t.predicate.value), toOx(t.object), namedNode(graphIri(ids[r])))),
    );
    const raw = new Store(quads);
    const rawLoadMs = performance.now() - r0;

    await backend.close();
    const l0 = performance.now();
    backend = await OxigraphGraphBackend.open({ path });
    const reloadMs = performance.now() - l0;

    process.stdout.write(
      `data: ${total} triples in ${RESOURCES} graphs\n` +
        `putTriples (SQLite commit + worker apply): ${Math.round(total / (writeMs / 1000))} triples/s; ` +
        `restart reload: ${fmt(reloadMs)} = ${(reloadMs / rawLoadMs).toFixed(2)}x building a raw Store from quads (${fmt(rawLoadMs)})\n`,
    );

    const scopes: [string, string[]][] = [
      ["1 resource", ids.slice(0, 1)],
      ["10 resources", ids.slice(0, 10)],
      [`all ${RESOURCES}`, ids],
    ];
    const queries: [string, string][] = [
      ["point lookup", `SELECT ?p ?o { <${EX}r0/p1> ?p ?o }`],
      ["2-hop join LIMIT 100", `SELECT ?a ?c { ?a <${EX}knows> ?b . ?b <${EX}knows> ?c } LIMIT 100`],
      ["filter + count", `SELECT (COUNT(*) AS ?n) { ?s <${EX}age> ?age FILTER(?age > 40) }`],
      ["GRAPH ?g count", "SELECT ?g (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"],
      ["CONSTRUCT one person", `CONSTRUCT WHERE { <${EX}r0/p1> ?p ?o }`],
      ["ASK", `ASK { ?s <${EX}name> "Person 0-1"@en }`],
    ];
    const runs = 15;
    // The worker's JIT and the collection of the load's garbage settle over the first few dozen queries.
    for (let i = 0; i < 100; i++) await backend.query(viewOf(ids), queries[i % queries.length][1], { timeoutMs: 600_000 });
    process.stdout.write("query | scope | scoped backend | raw store.query | ratio\n");
    for (const [qname, q] of queries) {
      for (const [sname, scope] of scopes) {
        const view = viewOf(scope);
        const graphs = scope.map((id) => namedNode(graphIri(id)));
        const format = q.startsWith("SELECT") ? { results_format: "application/sparql-results+json" } : {};
        const rawOnce = () => raw.query(q, { default_graph: graphs, named_graphs: graphs, ...format });
        const oursOnce = () => backend.query(view, q, { timeoutMs: 600_000 });
        for (let i = 0; i < 5; i++) {
          await oursOnce();
          rawOnce();
        }
        const ours = await median(runs, oursOnce);
        const base = await median(runs, rawOnce);
        process.stdout.write(`${qname} | ${sname} | ${fmt(ours)} | ${fmt(base)} | ${(ours / base).toFixed(2)}x\n`);
      }
    }
    for (const [sname, scope] of scopes) {
      const view = viewOf(scope);
      const graphs = scope.map((id) => namedNode(graphIri(id)));
      const subject = namedNode(`${EX}r0/p1`);
      const ours = await median(runs, () => backend.getTriples(view, `${EX}r0/p1`, { timeoutMs: 600_000 }));
      const base = await median(runs, () => graphs.flatMap((g) => raw.match(subject, null, null, g)));
      const trav = await median(runs, () => backend.traverse(view, `${EX}r0/p1`, 3, { timeoutMs: 600_000 }));
      process.stdout.write(
        `GetTriples | ${sname} | ${fmt(ours)} | ${fmt(base)} (raw match per graph) | ${(ours / base).toFixed(2)}x; Traverse depth 3: ${fmt(trav)}\n`,
      );
    }
    // Fair sharing (issue 24, finding 11): tenant A floods every worker with slow queries (a long time
    // limit), tenant B asks small ASKs one after another; B's answer time is about one slice plus a
    // worker's hand-over (A's newest query is preempted), not A's time limit.
    const slow = "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r }";
    const stop = new AbortController();
    const flood = Array.from({ length: 4 }, () =>
      backend.query(viewOf(ids), slow, { timeoutMs: 600_000, tenant: "a", signal: stop.signal }).catch(() => undefined),
    );
    await new Promise((r) => setTimeout(r, 300));
    const before = backend.preemptions;
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await backend.query(viewOf([ids[0]]), `ASK { ?s <${EX}name> ?n }`, { timeoutMs: 600_000, tenant: "b" });
      waits.push(performance.now() - t0);
    }
    stop.abort();
    await Promise.all(flood);
    process.stdout.write(
      `fair sharing: B's ASK while A floods every worker: median ${fmt(medianOf(waits))}, max ${fmt(Math.max(...waits))} ` +
        `(${backend.preemptions - before} preemptions of A, slice ${DEFAULT_GRAPH_SLICE_MS} ms)\n`,
    );
    await backend.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
