import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OxigraphGraphBackend, type OxigraphGraphBackendOptions } from "../../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { openSqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { InvalidArgumentError, ResourceExhaustedError, UnavailableError } from "../../src/domain/errors.js";
import { graphIri } from "../../src/domain/uko-uri.js";
import { A, EX, blank, iri, keysOf, lit, triple, viewOf } from "./graph-fixtures.js";

const OPTS = { timeoutMs: 20_000 };
const SLOW = "SELECT (COUNT(*) AS ?n) { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r . ?s ?t ?u . ?v ?w ?x }";
const filler = (n: number) => Array.from({ length: n }, (_, i) => triple(iri(`n${i}`), iri("v"), lit(String(i))));

let dir: string;
const open: OxigraphGraphBackend[] = [];
async function make(opts: Omit<OxigraphGraphBackendOptions, "path"> = {}): Promise<OxigraphGraphBackend> {
  const b = await OxigraphGraphBackend.open({ path: join(dir, "graph.db"), ...opts });
  open.push(b);
  return b;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acms-graph-int-"));
});
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("OxigraphGraphBackend internals", () => {
  it("bulk writes and reloads (the N-Quads path) keep every term, escapes and languages included, and blank nodes still join", async () => {
    const tricky = ['he said "hi"', "two\nlines", "back\\slash", "tab\there", "accent é ✓", "<not an iri>"];
    const bulk = Array.from({ length: 600 }, (_, i) =>
      triple(iri(`b${i}`), iri("says"), lit(tricky[i % tricky.length], i % 3 === 0 ? { language: "en" } : {})),
    );
    const checkBulk = async (backend: OxigraphGraphBackend) => {
      const r = await backend.query(viewOf([A]), `SELECT ?s ?o { ?s <${EX}says> ?o }`, OPTS);
      const got = r.form === "SELECT" ? r.rows.map((row) => [row.s.value, row.o.value, row.o.language ?? ""]).sort() : [];
      expect(got).toEqual(bulk.map((t, i) => [t.subject.value, t.object.value, i % 3 === 0 ? "en" : ""]).sort());
    };
    const checkJoin = async (backend: OxigraphGraphBackend) => {
      const joined = await backend.query(
        viewOf([A]),
        `SELECT ?n ?a { <${EX}k> <${EX}link> ?x . ?x <${EX}name> ?n . ?x <${EX}age> ?a }`,
        OPTS,
      );
      expect(joined.form === "SELECT" ? joined.rows.map((row) => [row.n.value, row.a.value]) : []).toEqual([["first", "7"]]);
    };
    const reopen = async (backend: OxigraphGraphBackend) => {
      await backend.close();
      open.splice(open.indexOf(backend), 1);
      return make();
    };
    let b = await make();
    await b.putTriples(A, bulk, true);
    await checkBulk(b);
    b = await reopen(b);
    await checkBulk(b);
    await b.putTriples(A, [triple(blank("x"), iri("name"), lit("first")), triple(iri("k"), iri("link"), blank("x"))], false);
    await b.putTriples(A, [triple(blank("x"), iri("age"), lit("7"))], false);
    await checkJoin(b);
    b = await reopen(b);
    await checkBulk(b);
    await checkJoin(b);
  });

  it("refuses result terms the wire cannot carry (RDF 1.2 triple terms) and keeps text direction", async () => {
    const b = await make();
    const err = await b.query(viewOf([A]), "SELECT (<<( <http://a> <http://b> <http://c> )>> AS ?t) {}", OPTS).catch((e: Error) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/cannot carry/);
    const dir = await b.query(viewOf([A]), 'SELECT (STRLANGDIR("x", "ar", "rtl") AS ?t) {}', OPTS);
    expect(dir).toMatchObject({ rows: [{ t: { kind: "literal", value: "x", language: "ar--rtl" } }] });
  });

  it("GetTriples gives typed literals exactly as written; SPARQL gives Oxigraph's canonical form", async () => {
    const b = await make();
    const XSD = "http://www.w3.org/2001/XMLSchema#";
    const written = [
      triple(iri("n"), iri("int"), lit("05", { datatype: `${XSD}int` })),
      triple(iri("n"), iri("bool"), lit("1", { datatype: `${XSD}boolean` })),
      triple(iri("n"), iri("odd"), lit("abc", { datatype: `${XSD}int` })),
      triple(iri("n"), iri("dec"), lit("1.50", { datatype: `${XSD}decimal` })),
    ];
    await b.putTriples(A, written, true);
    const exact = await b.getTriples(viewOf([A]), `${EX}n`, OPTS);
    expect(keysOf(exact.triples)).toEqual(keysOf(written));
    const r = await b.query(viewOf([A]), `SELECT ?p ?o { <${EX}n> ?p ?o }`, OPTS);
    const canonical = r.form === "SELECT" ? r.rows.map((row) => [row.p.value.slice(EX.length), row.o.value, row.o.datatype]) : [];
    expect(canonical.sort()).toEqual(
      [
        ["bool", "true", `${XSD}boolean`],
        ["dec", "1.5", `${XSD}decimal`],
        ["int", "5", `${XSD}integer`],
        ["odd", "abc", `${XSD}int`],
      ].sort(),
    );
  });

  it("a second worker answers while the first is busy", async () => {
    const b = await make({ workers: 2 });
    await b.putTriples(A, filler(40), true);
    let slowSettled = false;
    const slow = b
      .query(viewOf([A]), SLOW, { timeoutMs: 10_000 })
      .catch((e: Error) => e)
      .finally(() => (slowSettled = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(await b.query(viewOf([A]), `ASK { <${EX}n1> ?p ?o }`, OPTS)).toMatchObject({ boolean: true });
    // Answered while the first worker was still busy: one worker would have answered after the slow query.
    expect(slowSettled).toBe(false);
    expect((await slow).constructor.name).toBe("DeadlineExceededError");
  }, 30_000);

  it("a query's time limit counts its running time; waiting for a worker is bounded apart (RESOURCE_EXHAUSTED)", async () => {
    // Issue 12 changed this rule: the wait used to count against the waiting query's own limit, so one
    // tenant's slow queries timed out another's before they ran.
    const b = await make({ workers: 1, spares: 0, queueTimeoutMs: 400 });
    await b.putTriples(A, filler(40), true);
    const slow = b.query(viewOf([A]), SLOW, { timeoutMs: 1_000 }).catch((e: Error) => e);
    const waited = await b.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: 200 }).catch((e: Error) => e);
    expect(waited.constructor.name).toBe("ResourceExhaustedError");
    expect((waited as ResourceExhaustedError).retryAfterMs).toBeGreaterThan(0);
    expect((await slow).constructor.name).toBe("DeadlineExceededError");
    // A short limit is enough once the query runs, however long it waited.
    const c = await make({ workers: 1, spares: 0 });
    await c.putTriples(A, filler(40), true);
    const slow2 = c.query(viewOf([A]), SLOW, { timeoutMs: 1_000 }).catch((e: Error) => e);
    expect(await c.query(viewOf([A]), "ASK { ?s ?p ?o }", { timeoutMs: 100 })).toMatchObject({ boolean: true });
    expect((await slow2).constructor.name).toBe("DeadlineExceededError");
  }, 30_000);

  it("writes made while a worker restarts are applied exactly once", async () => {
    const b = await make();
    await b.putTriples(A, filler(40), true);
    const slow = b.query(viewOf([A]), SLOW, { timeoutMs: 300 }).catch((e: Error) => e);
    await b.putTriples(A, [triple(iri("x"), iri("y"), lit("replaced"))], true);
    await slow;
    await b.putTriples(A, [triple(iri("x"), iri("y"), lit("appended"))], false);
    const r = await b.query(viewOf([A]), "SELECT ?o { ?s ?p ?o }", OPTS);
    expect(r.form === "SELECT" && r.rows.map((row) => row.o.value).sort()).toEqual(["appended", "replaced"]);
  }, 30_000);

  it("a huge answer is read only up to the cap, without building it all", async () => {
    const b = await OxigraphGraphBackend.open({ path: join(dir, "graph.db"), maxResults: 10 });
    open.push(b);
    await b.putTriples(A, filler(20), true);
    const select = await b.query(viewOf([A]), "SELECT * { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }", { timeoutMs: 60_000 });
    expect(select).toMatchObject({ form: "SELECT", exhaustive: false });
    expect(select.form === "SELECT" && select.rows.length).toBe(10);
    const construct = await b.query(viewOf([A]), "CONSTRUCT { ?a ?b ?f } WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", { timeoutMs: 60_000 });
    expect(construct).toMatchObject({ form: "CONSTRUCT", exhaustive: false });
    expect(construct.form === "CONSTRUCT" && construct.triples.length).toBe(10);
  }, 90_000);

  it("a store that cannot be loaded fails open with UNAVAILABLE", async () => {
    const path = join(dir, "graph.db");
    const b = await OxigraphGraphBackend.open({ path });
    await b.close();
    const db = openSqliteDatabase(path);
    db.prepare("INSERT INTO graph_triples VALUES (?, 0, 'not an iri', 'http://p', 0, 'http://o', '', '')").run(graphIri(A));
    db.close();
    const err = await OxigraphGraphBackend.open({ path }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    // Several workers failing the same load, given up and stopped while others still load: each round
    // fails open the same way, and none of them throws in this thread afterwards (jest fails the test on
    // an uncaught "error" event from a worker whose listeners were gone).
    for (let round = 0; round < 12; round++) {
      const again = await OxigraphGraphBackend.open({ path, workers: 3, spares: 2 }).catch((e: Error) => e);
      expect(again).toBeInstanceOf(UnavailableError);
      expect((again as Error).message).toMatch(/could not be loaded/);
    }
  }, 60_000);

  it("a start with no write since the last load reads the snapshot file, blank nodes included; a write makes the next start read SQLite", async () => {
    const one = { workers: 1, spares: 0 };
    let b = await make(one);
    expect(b.loads).toEqual({ snapshot: 0, sqlite: 1 });
    await b.putTriples(
      A,
      [...filler(300), triple(blank("x"), iri("name"), lit("first")), triple(iri("k"), iri("link"), blank("x"))],
      false,
    );
    const ask = `SELECT ?n { <${EX}k> <${EX}link> ?x . ?x <${EX}name> ?n }`;
    const count = "SELECT (COUNT(*) AS ?c) { ?s ?p ?o }";
    const answers = async (backend: OxigraphGraphBackend) => [
      await backend.query(viewOf([A]), ask, OPTS),
      await backend.query(viewOf([A]), count, OPTS),
    ];
    const want = await answers(b);
    expect(want[1]).toMatchObject({ rows: [{ c: { value: "302" } }] });
    const reopen = async (backend: OxigraphGraphBackend) => {
      await backend.close();
      open.splice(open.indexOf(backend), 1);
      return make(one);
    };
    b = await reopen(b);
    expect(b.loads).toEqual({ snapshot: 0, sqlite: 1 });
    expect(await answers(b)).toEqual(want);
    b = await reopen(b);
    expect(b.loads).toEqual({ snapshot: 1, sqlite: 0 });
    expect(await answers(b)).toEqual(want);
    await b.putTriples(A, [triple(iri("late"), iri("v"), lit("x"))], false);
    b = await reopen(b);
    expect(b.loads).toEqual({ snapshot: 0, sqlite: 1 });
    expect(await b.query(viewOf([A]), `ASK { <${EX}late> ?p ?o }`, OPTS)).toMatchObject({ boolean: true });
  });

  it("refuses calls after close", async () => {
    const b = await make();
    await b.close();
    await expect(b.query(viewOf([A]), "ASK {}", OPTS)).rejects.toBeInstanceOf(UnavailableError);
    await expect(b.putTriples(A, filler(1), false)).rejects.toBeInstanceOf(UnavailableError);
  });
});
