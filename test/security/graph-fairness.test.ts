/**
 * Issue 24, finding 11 (red team): tenant A running slow SPARQL queries on every graph worker made tenant B's
 * small ASK wait until A's queries ended (DEADLINE_EXCEEDED at 10 s). Now a tenant with a query waiting
 * gets the next free worker before a tenant holding more, and a query of the tenant holding every worker
 * (or two more than the waiter) that has run a slice is preempted: its worker is replaced and it waits
 * again. A's queries here have a long time limit, so the only way B answers while they run is fairness.
 * No wall-clock bound is asserted (timings are in bench/graph-bench.ts): only what answered before what.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { GraphBackendService, TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { OxigraphGraphBackend } from "../../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { CONTRACT_ENV, seedWorld } from "../contract/contract-fixture.js";
import { A, iri, lit, triple, viewOf } from "../graph/graph-fixtures.js";
import { startTestServer } from "../support/test-server.js";

/** A query that runs far past any limit here (an 8-way cartesian product over 40 triples). */
const SLOW = "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r . ?s ?t ?u . ?v ?w ?x }";
const LONG_MS = 600_000;
const filler = Array.from({ length: 40 }, (_, i) => triple(iri(`n${i}`), iri("v"), lit(String(i))));

let dir: string;
let backend: OxigraphGraphBackend | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acms-graph-fair-"));
});
afterEach(async () => {
  await backend?.close();
  backend = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a backend and waits until its workers and spare have loaded, so A's flood takes every worker. */
async function openLoaded(workers: number): Promise<OxigraphGraphBackend> {
  const b = await OxigraphGraphBackend.open({ path: join(dir, "graph.db"), workers, spares: 1, sliceMs: 50, queueTimeoutMs: 15_000 });
  await b.putTriples(A, filler, true);
  while (b.loads.snapshot + b.loads.sqlite < workers + 1) await new Promise((r) => setTimeout(r, 20));
  return b;
}

/** Settles to "answered" or the error's class name, and records that it settled. */
function track(p: Promise<unknown>, settled: { n: number }): Promise<string> {
  return p
    .then(
      () => "answered",
      (e: Error) => e.constructor.name,
    )
    .finally(() => (settled.n += 1));
}

it("B's small ASK answers while A's slow queries hold every worker (A's are preempted, not failed)", async () => {
  const b = (backend = await openLoaded(2));
  const stop = new AbortController();
  const settled = { n: 0 };
  // Four slow queries of A: two take both workers, two wait behind them.
  const flood = Array.from({ length: 4 }, () =>
    track(b.query(viewOf([A]), SLOW, { timeoutMs: LONG_MS, tenant: "a", signal: stop.signal }), settled),
  );
  await new Promise((r) => setTimeout(r, 100));
  // Three in a row: each preempts a query of A again (A's reruns too), never A's longest-running one.
  for (let round = 0; round < 3; round++) {
    const ask = await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: LONG_MS, tenant: "b" }).catch((e: Error) => e);
    expect(ask).toMatchObject({ boolean: true });
    // B answered while every query of A was still running or waiting again: none had ended.
    expect(settled.n).toBe(0);
  }
  expect(b.preemptions).toBeGreaterThanOrEqual(3);
  stop.abort();
  await Promise.all(flood);
}, 60_000);

it("a preempted query runs again to its own time limit; B answers on a pool of one worker too", async () => {
  const b = (backend = await openLoaded(1));
  const settled = { n: 0 };
  const slow = track(b.query(viewOf([A]), SLOW, { timeoutMs: 1_500, tenant: "a" }), settled);
  await new Promise((r) => setTimeout(r, 100));
  const ask = await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: LONG_MS, tenant: "b" });
  expect(ask).toMatchObject({ boolean: true });
  expect(settled.n).toBe(0);
  expect(b.preemptions).toBe(1);
  // A's query, preempted once, runs again now; B's next query waits for it (a query is preempted at most
  // once, so a long query always ends), and it ends at its own time limit, not as a failure.
  let slowDone = false;
  void slow.then(() => (slowDone = true));
  await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: LONG_MS, tenant: "b" });
  expect(slowDone).toBe(true);
  expect(await slow).toBe("DeadlineExceededError");
  expect(b.preemptions).toBe(1);
}, 60_000);

it("through the real server: B's ASK answers while A floods every worker with slow queries", async () => {
  const t = await startTestServer({
    env: { ...CONTRACT_ENV, ACMS_SPARQL_TIMEOUT_MS: String(LONG_MS), ACMS_GRAPH_WORKERS: "2", ACMS_GRAPH_QUEUE_TIMEOUT_MS: "15000" },
  });
  try {
    const w = await seedWorld(t);
    // The world's six triples make SLOW a 6^8 product that ends in under a second: forty more make it endless.
    await t.client(IndexService, "writer").putTriples({
      resourceId: w.core,
      replace: false,
      triples: filler.map((_, i) => ({
        subject: { kind: TermKind.IRI, value: `https://example.org/fair/n${i}` },
        predicate: { kind: TermKind.IRI, value: "https://example.org/fair/v" },
        object: { kind: TermKind.LITERAL, value: String(i) },
      })),
    });
    const a = t.client(GraphBackendService, "writer", w.apiScope, "grpc");
    const other = t.client(GraphBackendService, "other", w.otherScope, "grpc");
    await other.sparqlQuery({ query: "ASK { ?s ?p ?o }" });
    const stop = new AbortController();
    const settled = { n: 0 };
    const flood = Array.from({ length: 4 }, () =>
      a
        .sparqlQuery({ query: SLOW }, { signal: stop.signal })
        .then(
          () => "answered",
          (e: unknown) => ConnectError.from(e).code,
        )
        .finally(() => (settled.n += 1)),
    );
    await new Promise((r) => setTimeout(r, 300));
    const ask = await other.sparqlQuery({ query: "ASK { ?s ?p ?o }" }).catch((e: unknown) => ConnectError.from(e));
    expect(ask).not.toBeInstanceOf(ConnectError);
    expect(settled.n).toBe(0);
    stop.abort();
    // A's queries ended only when cancelled here (the client reports its own abort).
    for (const outcome of await Promise.all(flood)) expect(outcome).not.toBe("answered");
  } finally {
    await t.close(true);
  }
}, 60_000);
