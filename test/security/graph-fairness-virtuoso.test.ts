/**
 * Issue 24, finding 11, on the graph on a SPARQL endpoint (a real Virtuoso): tenant A's slow queries held
 * every connection to the endpoint and tenant B's small ASK waited behind them. Now the endpoint's queries
 * take one of a few fair slots (`FairSlots`, as the embedded workers): a tenant with a query waiting gets
 * the next free slot before a tenant holding more, and a query of the tenant holding every slot that has
 * run a slice is stopped (its HTTP request torn down) and queued again. And Virtuoso really stops the
 * queries the service gave up on: Virtuoso mostly notices a client that left, but not always, so a stopped
 * query still counts against its caller until the time limit the service handed Virtuoso with it
 * (`timeout`) has ended it; A never has more queries on Virtuoso than there are slots (its pending HTTP
 * requests, `http_pending_req()` as dba, are sampled), and once A's calls are cancelled they drop to none.
 * No wall-clock bound is asserted (timings are in bench/graph-endpoint-bench.ts): only what answered before what.
 */
import { setMaxListeners } from "node:events";
import { Code, ConnectError } from "@connectrpc/connect";
import { GraphBackendService, TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { SparqlEndpointGraphBackend } from "../../src/adapters/sparql-endpoint/sparql-endpoint-graph-backend.js";
import { CONTRACT_ENV, seedWorld } from "../contract/contract-fixture.js";
import { graphOnVirtuoso } from "../support/engines/graph-on-virtuoso.js";
import type { VirtuosoInstance } from "../support/engines/virtuoso.js";
import { A, iri, lit, triple, viewOf } from "../graph/graph-fixtures.js";
import { startTestServer } from "../support/test-server.js";

const virtuoso = graphOnVirtuoso();

/** A query that runs far past any limit here on Virtuoso (an 8-way cartesian product over 40 triples). */
const SLOW = "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r . ?s ?t ?u . ?v ?w ?x }";
/** The finding's own attack: a 4-way VALUES cross product (200^4 rows), as slow there. */
const VALUES = Array.from({ length: 200 }, (_, i) => i).join(" ");
const SLOW_VALUES = `SELECT (COUNT(*) AS ?n) { VALUES ?a { ${VALUES} } VALUES ?b { ${VALUES} } VALUES ?c { ${VALUES} } VALUES ?d { ${VALUES} } }`;
const LONG_MS = 600_000;
/** A's time limit: far past B's rounds, and what bounds Virtuoso's work on a query of A it did not see stopped. */
const A_MS = 20_000;
/**
 * A's flood: more queries than the adapter once kept connections (16), so before the fix A held every
 * connection whatever the pool size; now two run (the slots given here) and the rest wait in A's queue.
 */
const FLOOD = 20;
const filler = Array.from({ length: 40 }, (_, i) => triple(iri(`n${i}`), iri("v"), lit(String(i))));

let backend: SparqlEndpointGraphBackend | undefined;

afterEach(async () => {
  await backend?.close();
  backend = undefined;
});

async function open(concurrency: number): Promise<SparqlEndpointGraphBackend> {
  const v = virtuoso.current();
  const b = await SparqlEndpointGraphBackend.open({
    queryUrl: v.authQueryUrl,
    updateUrl: v.authQueryUrl,
    user: v.user,
    password: v.password,
    concurrency,
    sliceMs: 50,
    queueTimeoutMs: 60_000,
  });
  await b.putTriples(A, filler, true);
  return b;
}

/** How many HTTP requests Virtuoso is still working on (its own view, asked as dba over SQL). */
function pendingHttpRequests(v: VirtuosoInstance): number {
  const out = v.sql("select length (http_pending_req());\n");
  const m = /(\d+)\s*$/.exec(out.trim());
  if (!m) throw new Error(`unexpected isql output: ${out}`);
  return Number(m[1]);
}

/** Waits until Virtuoso works on no HTTP request; fails (by the test's time-out) if it never stops. */
async function untilVirtuosoIdle(v: VirtuosoInstance): Promise<void> {
  while (pendingHttpRequests(v) > 0) await new Promise((r) => setTimeout(r, 200));
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

it.each([
  ["an 8-way triple product", SLOW],
  ["a 4-way VALUES cross product", SLOW_VALUES],
])(
  "B's small ASK answers while A's slow queries (%s) hold every endpoint slot; Virtuoso stops A's once cancelled",
  async (_name, slow) => {
    const b = (backend = await open(2));
    const stop = new AbortController();
    setMaxListeners(FLOOD + 1, stop.signal);
    const settled = { n: 0 };
    // A's slow queries: two take both slots, the rest wait behind them.
    const flood = Array.from({ length: FLOOD }, () =>
      track(b.query(viewOf([A]), slow, { timeoutMs: A_MS, tenant: "a", signal: stop.signal }), settled),
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(pendingHttpRequests(virtuoso.current())).toBeGreaterThan(0);
    // Three rounds: the first preempts A's newest query; A's stopped query counts against A until its limit,
    // so A never has more than the two slots' worth on Virtuoso, and B's later queries take the free slot.
    for (let round = 0; round < 3; round++) {
      const ask = await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: LONG_MS, tenant: "b" }).catch((e: Error) => e);
      expect(ask).toMatchObject({ boolean: true });
      const select = await b.query(viewOf([A]), `SELECT ?o { <${iri("n7").value}> ?p ?o }`, { timeoutMs: LONG_MS, tenant: "b" });
      expect(select).toMatchObject({ form: "SELECT", rows: [{ o: { value: "7" } }] });
      // B answered while every query of A was still running or waiting again: none had ended.
      expect(settled.n).toBe(0);
      // On Virtuoso: A's running and stopped-but-maybe-running queries, never more than the 2 slots (+ B's last).
      expect(pendingHttpRequests(virtuoso.current())).toBeLessThanOrEqual(3);
    }
    expect(b.preemptions).toBeGreaterThanOrEqual(1);
    stop.abort();
    for (const outcome of await Promise.all(flood)) expect(outcome).not.toBe("answered");
    // Every attempt of A torn down (the cancelled ones and the preempted ones before them) ends on Virtuoso
    // (when it notices A left, or at the latest at A's limit: far sooner than its own 120 s MaxQueryExecutionTime).
    await untilVirtuosoIdle(virtuoso.current());
    expect(await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: LONG_MS, tenant: "b" })).toMatchObject({ boolean: true });
  },
  120_000,
);

it("a preempted query runs again to its own time limit, once its stopped run's limit passed; B answers on a pool of one slot", async () => {
  const b = (backend = await open(1));
  const settled = { n: 0 };
  const slow = track(b.query(viewOf([A]), SLOW, { timeoutMs: 1_500, tenant: "a" }), settled);
  await new Promise((r) => setTimeout(r, 100));
  const ask = await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: LONG_MS, tenant: "b" });
  expect(ask).toMatchObject({ boolean: true });
  expect(settled.n).toBe(0);
  expect(b.preemptions).toBe(1);
  // A's stopped run counts against A until its limit (Virtuoso may still be on it): B's next query takes
  // the slot meanwhile. Then A's query runs again (alone on one slot a query is preempted at most once, so
  // it always ends), and it ends at its own time limit, not as a failure.
  await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: LONG_MS, tenant: "b" });
  expect(await slow).toBe("DeadlineExceededError");
  expect(b.preemptions).toBe(1);
  await untilVirtuosoIdle(virtuoso.current());
}, 120_000);

it("a tenant's queue is bounded: past its cap a query is RESOURCE_EXHAUSTED at once, others still served", async () => {
  const v = virtuoso.current();
  const b = (backend = await SparqlEndpointGraphBackend.open({
    queryUrl: v.authQueryUrl,
    updateUrl: v.authQueryUrl,
    user: v.user,
    password: v.password,
    concurrency: 1,
    maxQueuedPerTenant: 2,
    sliceMs: 50,
  }));
  await b.putTriples(A, filler, true);
  const stop = new AbortController();
  const settled = { n: 0 };
  const flood = Array.from({ length: 3 }, () =>
    track(b.query(viewOf([A]), SLOW, { timeoutMs: A_MS, tenant: "a", signal: stop.signal }), settled),
  );
  const over = await b.query(viewOf([A]), SLOW, { timeoutMs: A_MS, tenant: "a", signal: stop.signal }).catch((e: Error) => e);
  expect(over.constructor.name).toBe("ResourceExhaustedError");
  expect(await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: LONG_MS, tenant: "b" })).toMatchObject({ boolean: true });
  expect(settled.n).toBe(0);
  stop.abort();
  await Promise.all(flood);
  await untilVirtuosoIdle(v);
}, 120_000);

it("through the real server on Virtuoso: B's ASK answers while A floods every endpoint slot", async () => {
  const t = await startTestServer({
    env: { ...CONTRACT_ENV, ACMS_SPARQL_TIMEOUT_MS: String(A_MS), ACMS_SPARQL_CONCURRENCY: "2", ACMS_GRAPH_QUEUE_TIMEOUT_MS: "60000" },
  });
  try {
    const w = await seedWorld(t);
    // The world's six triples make SLOW a 6^8 product that ends soon: forty more make it endless.
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
    setMaxListeners(FLOOD + 1, stop.signal);
    // How each of A's queries ended, as it ended (its answer, or its error's code and message).
    const settled: string[] = [];
    const flood = Array.from({ length: FLOOD }, () =>
      a
        .sparqlQuery({ query: SLOW }, { signal: stop.signal })
        .then(
          () => "answered",
          (e: unknown) => {
            const err = ConnectError.from(e);
            return `${Code[err.code]}: ${err.rawMessage}`;
          },
        )
        .then((outcome) => {
          settled.push(outcome);
          return outcome;
        }),
    );
    await new Promise((r) => setTimeout(r, 300));
    const ask = await other.sparqlQuery({ query: "ASK { ?s ?p ?o }" }).catch((e: unknown) => ConnectError.from(e));
    expect(ask).not.toBeInstanceOf(ConnectError);
    expect(settled).toEqual([]);
    stop.abort();
    // A's queries ended only when cancelled here (the client reports its own abort).
    for (const outcome of await Promise.all(flood)) expect(outcome).not.toBe("answered");
    // The server saw the calls cancelled and tore their requests down: Virtuoso stops working on them.
    await untilVirtuosoIdle(virtuoso.current());
  } finally {
    await t.close(true);
  }
}, 120_000);
