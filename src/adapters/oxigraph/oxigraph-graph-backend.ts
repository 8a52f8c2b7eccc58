import type BetterSqlite3 from "better-sqlite3";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { blankNode, literal, namedNode } from "oxigraph";
import { DeadlineExceededError, InvalidArgumentError, ResourceExhaustedError, UnavailableError } from "../../domain/errors.js";
import { inspectSparqlQuery, MAX_SPARQL_LENGTH } from "../../domain/inspect-sparql-query.js";
import type { RdfTerm, RdfTriple } from "../../domain/rdf-term.js";
import { requireText } from "../../domain/request-limits.js";
import { scopeSparqlDataset } from "../../domain/scope-sparql-dataset.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { graphIri, resourceIdOfGraphIri } from "../../domain/uko-uri.js";
import { isUlid } from "../../domain/ulid-id.js";
import type { GraphBackend, GraphQueryOptions, GraphQueryResult, GraphTriple, GraphTriplesResult } from "../../ports/graph-backend.js";
import { resolvePackage } from "../kit/resolve-package.js";
import { checkpointWal, openSqliteDatabase, type SqliteDatabase } from "../kit/sqlite-database.js";
import { FairQueue, nextPreemption } from "../../domain/fair-queue.js";
import {
  oxigraphWorkerSource,
  type OxigraphWorkerData,
  type WorkerError,
  type WorkerReply,
  type WorkerRequest,
  type WorkerRow,
  type WorkerWrite,
} from "./oxigraph-worker.js";

export { MAX_SPARQL_LENGTH };

/** The worker's program text, made once per process. */
const WORKER_SOURCE = oxigraphWorkerSource();

/** The default cap on rows or triples of one answer. */
export const DEFAULT_GRAPH_MAX_RESULTS = 10_000;

const XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";
const RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";

/** Options of the Oxigraph adapter. */
export interface OxigraphGraphBackendOptions {
  /** The SQLite file that holds every triple durably (created when missing). */
  path: string;
  /** The most rows or triples one answer carries; more makes it non-exhaustive. */
  maxResults?: number;
  /** Query workers, each holding a full copy of the store (default DEFAULT_GRAPH_WORKERS). */
  workers?: number;
  /**
   * Loaded workers kept idle (default 1): a worker stopped at a query's time limit is replaced by a spare
   * at once, so no other tenant waits for a reload.
   */
  spares?: number;
  /** How long a query may wait for a worker, in ms (default DEFAULT_GRAPH_QUEUE_TIMEOUT_MS). */
  queueTimeoutMs?: number;
  /** The most queries one tenant may have waiting (default DEFAULT_GRAPH_MAX_QUEUED_PER_TENANT). */
  maxQueuedPerTenant?: number;
  /**
   * The slice, in ms (default DEFAULT_GRAPH_SLICE_MS): a query that has run this long may be preempted for
   * a tenant that has waited this long while another holds more workers (see `rebalance`).
   */
  sliceMs?: number;
  /**
   * Start no query worker until `beginLoading` (or a first query): a server starting calls it once
   * listening, so loading the triples neither competes with its start-up for the cores nor counts in its
   * memory then. Writes are durable meanwhile (the workers load the committed rows).
   */
  deferLoad?: boolean;
}

/** The default pool: two workers, so one slow query never holds every tenant. */
export const DEFAULT_GRAPH_WORKERS = 2;
export const DEFAULT_GRAPH_QUEUE_TIMEOUT_MS = 30_000;
export const DEFAULT_GRAPH_MAX_QUEUED_PER_TENANT = 64;
export const DEFAULT_GRAPH_SLICE_MS = 250;

type Statement = BetterSqlite3.Statement<unknown[]>;

/** A stored triple (see the worker module). */
type Row = WorkerRow;

interface Job {
  id: number;
  tenant: string;
  timeoutMs: number;
  request: WorkerRequest;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
  signal?: AbortSignal;
  onAbort?: () => void;
  slot?: Slot;
  /** When it entered its tenant's queue (last), and when a worker took it (last), by `performance.now()`. */
  queuedAt: number;
  startedAt?: number;
  /** Preempted once already: alone on a pool of one worker, it then runs to its end or its time limit. */
  preempted?: boolean;
}

interface Slot {
  worker: Worker;
  state: "loading" | "ready" | "dead";
  job?: Job;
}

/** Resolves an installed package to an absolute path the eval'd worker can `require`. */
/**
 * Stops a worker for good, its later events unheard. It keeps a listener for "error": a worker still
 * loading can throw between here and its end, and an "error" event with no listener is thrown in this
 * thread (an uncaught exception: the server would die of a worker it had already given up on).
 */
function retire(worker: Worker): Promise<number> {
  worker.removeAllListeners();
  worker.on("error", () => {});
  return worker.terminate();
}

/**
 * Runs `make` (an Oxigraph term constructor, used here for its checks) and frees the term at once. Why:
 * a term holds WebAssembly memory until a garbage collection finalises it, and each growth of that
 * memory makes V8 collect the whole heap, so a large PutTriples left unfreed terms behind and each
 * later growth paid for every object the service holds (a million triples took minutes, not seconds).
 */
function checked<T extends object, R>(make: () => T, read: (term: T) => R): R {
  const term = make();
  try {
    return read(term);
  } finally {
    // `free` is wasm-bindgen's, missing from the package's type declarations.
    (term as { free?: () => void }).free?.();
  }
}

function iriOf(value: string, field: string): string {
  try {
    return checked(
      () => namedNode(value),
      (n) => n.value,
    );
  } catch (err) {
    throw InvalidArgumentError.field(field, `"${value.slice(0, 120)}" is not an absolute IRI: ${(err as Error).message}`);
  }
}

function blankLabelOf(value: string, field: string): string {
  const label = value.startsWith("_:") ? value.slice(2) : value;
  try {
    return checked(
      () => blankNode(label),
      (n) => n.value,
    );
  } catch {
    throw InvalidArgumentError.field(field, `"${value.slice(0, 120)}" is not a blank node label`);
  }
}

/** Checks one term with Oxigraph's own rules and encodes it as stored: `[kind, value, datatype, language]`. */
function encodeTerm(t: RdfTerm, field: string, allowed: readonly RdfTerm["kind"][]): [number, string, string, string] {
  if (!t || !allowed.includes(t.kind)) throw InvalidArgumentError.field(field, `must be ${allowed.join(" or ")}`);
  if (typeof t.value !== "string") throw InvalidArgumentError.field(`${field}.value`, "is required");
  if (t.kind === "iri") return [0, iriOf(t.value, `${field}.value`), "", ""];
  if (t.kind === "blank") return [1, blankLabelOf(t.value, `${field}.value`), "", ""];
  const datatype = t.datatype ?? "";
  const language = t.language ?? "";
  if (language !== "") {
    if (datatype !== "" && datatype !== RDF_LANG_STRING) {
      throw InvalidArgumentError.field(`${field}.datatype`, "a literal with a language has no datatype but rdf:langString");
    }
    try {
      return [
        2,
        t.value,
        "",
        checked(
          () => literal(t.value, language),
          (l) => l.language,
        ),
      ];
    } catch (err) {
      throw InvalidArgumentError.field(`${field}.language`, `"${language.slice(0, 40)}" is not a language tag: ${(err as Error).message}`);
    }
  }
  if (datatype === RDF_LANG_STRING) throw InvalidArgumentError.field(`${field}.language`, "rdf:langString needs a language");
  const dt = datatype === "" ? "" : iriOf(datatype, `${field}.datatype`);
  return [2, t.value, dt === XSD_STRING ? "" : dt, ""];
}

function encodeTriple(t: RdfTriple, field: string): Row {
  const s = encodeTerm(t.subject, `${field}.subject`, ["iri", "blank"]);
  const p = encodeTerm(t.predicate, `${field}.predicate`, ["iri"]);
  const o = encodeTerm(t.object, `${field}.object`, ["iri", "blank", "literal"]);
  return [s[0], s[1], p[1], o[0], o[1], o[2], o[3]];
}

/** The longest GetTriples subject or Traverse start accepted (as PutTriples bounds a stored term). */
export const MAX_NODE_LENGTH = 64 * 1024;

/** Parses GetTriples' subject or Traverse's start: an absolute IRI, or `_:label` for a blank node. */
function nodeOf(value: string, field: string): RdfTerm {
  if (value.length === 0) throw InvalidArgumentError.field(field, "must not be empty");
  if (value.length > MAX_NODE_LENGTH)
    throw InvalidArgumentError.field(field, `must be at most ${MAX_NODE_LENGTH} characters, got ${value.length}`);
  if (value.startsWith("_:")) return { kind: "blank", value: blankLabelOf(value, field) };
  return { kind: "iri", value: iriOf(value, field) };
}

function errorOf(e: WorkerError): Error {
  switch (e.code) {
    case "syntax":
    case "query":
    case "unrepresentable":
      return InvalidArgumentError.field("query", e.message);
    case "too_large":
      return new ResourceExhaustedError(`the graph answer is too large: ${e.message}`);
    default:
      return new UnavailableError(`the graph engine failed and is restarting: ${e.message}`);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new UnavailableError("the graph query was cancelled");
}

/**
 * The embedded graph backend: Oxigraph (SPARQL 1.1), one named graph per resource (`uko://<ulid>/`).
 *
 * Durability: Oxigraph's JavaScript bindings keep the store in memory only, so the triples live in a
 * SQLite table (WAL, `synchronous = FULL`), the source of truth. `putTriples` commits there in one
 * transaction (replace = delete + insert in the same one) before it resolves; the in-memory store is a
 * cache rebuilt from that table at start. The first worker to load writes an N-Quads snapshot beside
 * the database (`<path>.nq`, tagged with the write sequence number); the workers started after it, a
 * spare replacing a stopped worker, and the next start while no write came meanwhile load that one
 * file instead of converting every row again (see `OXIGRAPH_WORKER_SOURCE`). Chosen over per-resource N-Quads files because one transaction
 * covers the data and the write sequence number together, a replace is atomic without rename dances, and
 * loading needs no parser that would rename blank nodes (so labels stay stable across restarts).
 *
 * Time limits: queries run on a pool of worker threads, each owning a copy of the store (see
 * `OXIGRAPH_WORKER_SOURCE`), fed from one queue per tenant served round robin; a query's time limit counts
 * from when a worker takes it, waiting is bounded apart (RESOURCE_EXHAUSTED). At its deadline or on
 * cancellation a running query's worker is terminated and replaced by a loaded spare (a new spare loads
 * from SQLite), so no query can block the service and no other tenant waits for a reload. Writes are posted to every worker after they commit, in order, so a
 * query sent after `putTriples` resolved sees its triples.
 *
 * Scope: every query gets an explicit dataset, default graph = union of the in-scope graphs and named
 * graphs = the same list (narrowed by the query's own FROM / FROM NAMED), so `GRAPH ?g` can only visit
 * in-scope graphs; GetTriples and Traverse read only in-scope graphs and report each triple's graph for
 * the leak guard.
 *
 * GetTriples and Traverse read the stored rows (in the worker, through the subject index), so their
 * terms are exactly those written. SPARQL answers come from Oxigraph, which keeps XSD numbers, booleans
 * and the like by value: `"05"^^xsd:int` comes back as `"5"^^xsd:integer` there. Blank node labels are
 * kept as given (a label is one node across the graphs a query unions); language tags are lower-cased.
 * @example const graph = await OxigraphGraphBackend.open({ path: `${dataDir}/graph.db` });
 */
export class OxigraphGraphBackend implements GraphBackend {
  private readonly slots: Slot[] = [];
  private readonly spares: Slot[] = [];
  private readonly spareCount: number;
  private readonly queueTimeoutMs: number;
  private readonly maxQueuedPerTenant: number;
  private readonly queue = new FairQueue<Job>();
  private deferred: { workers: number; spares: number } | undefined;
  /** How the workers loaded so far got the store: from the snapshot file or from every SQLite row (tests and the log read it). */
  readonly loads = { snapshot: 0, sqlite: 0 };
  /** Queries stopped for another tenant and put back at the head of their tenant's queue (tests and the bench read it). */
  preemptions = 0;
  private readonly sliceMs: number;
  private preemptTimer: NodeJS.Timeout | undefined;
  private nextId = 0;
  private seq: number;
  private closed = false;
  private readonly workerData: OxigraphWorkerData;
  private readyWaiters: { resolve(): void; reject(err: Error): void }[] = [];
  private readonly cap: number;
  private readonly insertRow: Statement;
  private readonly deleteGraph: Statement;
  private readonly nextGraph: Statement;
  private readonly setSeq: Statement;

  private constructor(
    private readonly db: SqliteDatabase,
    path: string,
    opts: OxigraphGraphBackendOptions,
  ) {
    this.cap = opts.maxResults ?? DEFAULT_GRAPH_MAX_RESULTS;
    db.exec(`
      CREATE TABLE IF NOT EXISTS graph_triples (
        graph TEXT NOT NULL,
        s_kind INTEGER NOT NULL,
        s TEXT NOT NULL,
        p TEXT NOT NULL,
        o_kind INTEGER NOT NULL,
        o TEXT NOT NULL,
        o_datatype TEXT NOT NULL,
        o_language TEXT NOT NULL,
        PRIMARY KEY (graph, s_kind, s, p, o_kind, o, o_datatype, o_language)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS graph_triples_subject ON graph_triples (s_kind, s);
      CREATE INDEX IF NOT EXISTS graph_triples_blank ON graph_triples (graph) WHERE s_kind = 1 OR o_kind = 1;
      CREATE TABLE IF NOT EXISTS graph_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      INSERT OR IGNORE INTO graph_meta (key, value) VALUES ('seq', 0);
    `);
    this.seq = Number((db.prepare("SELECT value FROM graph_meta WHERE key = 'seq'").get() as { value: number }).value);
    this.insertRow = db.prepare(
      "INSERT OR IGNORE INTO graph_triples (graph, s_kind, s, p, o_kind, o, o_datatype, o_language) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.deleteGraph = db.prepare("DELETE FROM graph_triples WHERE graph = ?");
    // One seek of the primary key a graph (graph leads it), however many triples each holds.
    this.nextGraph = db.prepare("SELECT graph FROM graph_triples WHERE graph > ? ORDER BY graph LIMIT 1").pluck();
    this.setSeq = db.prepare("UPDATE graph_meta SET value = ? WHERE key = 'seq'");
    this.workerData = {
      oxigraphPath: resolvePackage("oxigraph", "the graph query worker"),
      sqlitePath: resolvePackage("better-sqlite3", "the graph query worker"),
      dbPath: path,
      snapshotPath: `${path}.nq`,
    };
    const workers = Math.max(1, opts.workers ?? DEFAULT_GRAPH_WORKERS);
    this.spareCount = Math.max(0, opts.spares ?? 1);
    this.queueTimeoutMs = opts.queueTimeoutMs ?? DEFAULT_GRAPH_QUEUE_TIMEOUT_MS;
    this.maxQueuedPerTenant = opts.maxQueuedPerTenant ?? DEFAULT_GRAPH_MAX_QUEUED_PER_TENANT;
    this.sliceMs = Math.max(1, opts.sliceMs ?? DEFAULT_GRAPH_SLICE_MS);
    if (!opts.deferLoad) this.slots.push(this.spawn());
    this.deferred = { workers: workers - 1, spares: this.spareCount };
  }

  /** Starts loading the store into the first query worker, when `deferLoad` held it back (else a no-op). */
  beginLoading(): void {
    if (this.closed || this.slots.length > 0) return;
    this.slots.push(this.spawn());
  }

  /**
   * Starts the workers beyond the first, once the first has loaded (or failed): they then load the
   * snapshot it wrote rather than each reading every row from SQLite, and do not compete with it for
   * the cores while the first load runs.
   */
  private spawnDeferred(): void {
    const deferred = this.deferred;
    if (!deferred || this.closed) return;
    this.deferred = undefined;
    for (let i = 0; i < deferred.workers; i++) this.slots.push(this.spawn());
    for (let i = 0; i < deferred.spares; i++) this.spares.push(this.spawn());
  }

  /** Opens the store at `opts.path` and resolves once a query worker has loaded it. */
  static async open(opts: OxigraphGraphBackendOptions): Promise<OxigraphGraphBackend> {
    const backend = OxigraphGraphBackend.start(opts);
    try {
      await backend.whenReady();
    } catch (err) {
      await backend.close();
      throw err;
    }
    return backend;
  }

  /**
   * Opens the store at `opts.path` and returns at once, while the query workers load it in the background
   * (a server starts serving without waiting for the triples; `whenReady` says when queries can run).
   * Writes are durable at once; queries sent meanwhile wait for a loaded worker (bounded by the queue wait).
   */
  static start(opts: OxigraphGraphBackendOptions): OxigraphGraphBackend {
    const db = openSqliteDatabase(opts.path);
    try {
      return new OxigraphGraphBackend(db, opts.path, opts);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  generation(): bigint {
    return BigInt(this.seq);
  }

  async putTriples(resourceId: string, triples: readonly RdfTriple[], replace: boolean): Promise<number> {
    this.assertOpen();
    const graph = this.graphOf(resourceId);
    const unique = new Map<string, Row>();
    triples.forEach((t, i) => {
      const row = encodeTriple(t, `triples[${i}]`);
      unique.set(JSON.stringify(row), row);
    });
    const rows = [...unique.values()];
    const seq = this.db.transaction(() => {
      if (replace) this.deleteGraph.run(graph);
      for (const r of rows) this.insertRow.run(graph, ...r);
      return this.bumpSeq();
    })();
    this.postWrite({ type: "write", seq, graph, replace, rows });
    return rows.length;
  }

  async clearResource(resourceId: string): Promise<void> {
    this.assertOpen();
    const graph = this.graphOf(resourceId);
    const seq = this.db.transaction(() => {
      this.deleteGraph.run(graph);
      return this.bumpSeq();
    })();
    this.postWrite({ type: "clear", seq, graph });
  }

  /**
   * Drops the resource's graph as `clearResource` does, counting its rows, and deletes the N-Quads snapshot
   * (which still holds them): the next worker to load reads SQLite and writes a fresh one.
   */
  async eraseResource(resourceId: string): Promise<number> {
    this.assertOpen();
    const graph = this.graphOf(resourceId);
    const { count, seq } = this.db.transaction(() => {
      const n = this.deleteGraph.run(graph).changes;
      return { count: n, seq: this.bumpSeq() };
    })();
    this.postWrite({ type: "clear", seq, graph });
    rmSync(this.workerData.snapshotPath, { force: true });
    await checkpointWal(this.db);
    return count;
  }

  async resourceIds(): Promise<string[]> {
    this.assertOpen();
    const ids: string[] = [];
    for (
      let graph = this.nextGraph.get("") as string | undefined;
      graph !== undefined;
      graph = this.nextGraph.get(graph) as string | undefined
    ) {
      const id = resourceIdOfGraphIri(graph);
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  async query(view: ScopedBackendView, sparql: string, opts: GraphQueryOptions): Promise<GraphQueryResult> {
    requireText("query", sparql, MAX_SPARQL_LENGTH);
    const inspection = inspectSparqlQuery(sparql);
    const dataset = scopeSparqlDataset(inspection, view);
    return (await this.run({ type: "query", sparql, form: inspection.form, ...dataset, cap: this.cap }, opts)) as GraphQueryResult;
  }

  async getTriples(view: ScopedBackendView, subject: string, opts: GraphQueryOptions): Promise<GraphTriplesResult> {
    return this.walk(view, nodeOf(subject, "subject"), 0, opts);
  }

  async traverse(view: ScopedBackendView, start: string, depth: number, opts: GraphQueryOptions): Promise<GraphTriplesResult> {
    if (!Number.isInteger(depth) || depth < 0) throw InvalidArgumentError.field("depth", `must be 0 or more, got ${depth}`);
    return this.walk(view, nodeOf(start, "start"), depth, opts);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.preemptTimer);
    const err = new UnavailableError("the graph backend is closed");
    for (const job of this.queue.drain()) this.finish(job).reject(err);
    const stopping: Promise<number>[] = [];
    for (const slot of [...this.slots, ...this.spares]) {
      if (slot.job) this.finish(slot.job).reject(err);
      slot.state = "dead";
      stopping.push(retire(slot.worker));
    }
    await Promise.all(stopping);
    for (const w of this.readyWaiters.splice(0)) w.reject(err);
    this.db.close();
  }

  private async walk(view: ScopedBackendView, start: RdfTerm, depth: number, opts: GraphQueryOptions): Promise<GraphTriplesResult> {
    const graphs = view.resourceIds.map(graphIri);
    const found = (await this.run({ type: "traverse", start, depth, graphs, cap: this.cap }, opts)) as {
      triples: (RdfTriple & { graph: string })[];
      exhaustive: boolean;
    };
    const triples: GraphTriple[] = found.triples.map(({ graph, ...t }) => ({ ...t, resourceId: resourceIdOfGraphIri(graph) ?? graph }));
    return { triples, exhaustive: found.exhaustive };
  }

  private graphOf(resourceId: string): string {
    if (!isUlid(resourceId)) throw InvalidArgumentError.field("resource_id", `"${resourceId.slice(0, 60)}" is not a ULID`);
    return graphIri(resourceId);
  }

  private bumpSeq(): number {
    const next = this.seq + 1;
    this.setSeq.run(next);
    this.seq = next;
    return next;
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError("the graph backend is closed");
  }

  private postWrite(message: WorkerWrite): void {
    for (const slot of [...this.slots, ...this.spares]) if (slot.state !== "dead") slot.worker.postMessage(message);
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: this.workerData });
    const slot: Slot = { worker, state: "loading" };
    worker.on("message", (m: WorkerReply) => this.onMessage(slot, m));
    worker.on("error", (err: Error) =>
      this.onWorkerFailure(slot, new UnavailableError(`the graph engine failed and is restarting: ${err.message}`)),
    );
    worker.on("exit", (code: number) =>
      this.onWorkerFailure(slot, new UnavailableError(`the graph engine exited (code ${code}) and is restarting`)),
    );
    return slot;
  }

  /**
   * Replaces a worker (stuck on a query, cancelled, or failed): with a loaded spare when one is ready (and a
   * new spare starts loading from SQLite), else with a fresh worker loading. Only that worker's queries stop.
   */
  private restart(slot: Slot): void {
    void retire(slot.worker);
    if (this.closed) {
      slot.state = "dead";
      return;
    }
    const spareAt = this.spares.findIndex((s) => s.state === "ready");
    let fresh: Slot;
    if (spareAt >= 0) {
      fresh = this.spares.splice(spareAt, 1)[0];
      this.spares.push(this.spawn());
    } else fresh = this.spawn();
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots[index] = fresh;
  }

  /** A worker died: a running query fails with `failure`; a worker that never loaded is left dead until the next query. */
  private onWorkerFailure(slot: Slot, failure: Error): void {
    if (slot.state === "dead" || this.closed) return;
    this.spawnDeferred();
    const spareAt = this.spares.indexOf(slot);
    if (spareAt >= 0) {
      // A spare that failed is dropped; the next restart starts another.
      slot.state = "dead";
      void retire(slot.worker);
      this.spares.splice(spareAt, 1);
      return;
    }
    const job = slot.job;
    slot.job = undefined;
    if (slot.state === "ready") {
      this.restart(slot);
      if (job) this.finish(job).reject(failure);
      this.dispatch();
      return;
    }
    slot.state = "dead";
    void retire(slot.worker);
    if (this.slots.every((s) => s.state === "dead")) {
      const err = new UnavailableError(`the graph store could not be loaded: ${failure.message}`);
      for (const j of this.queue.drain()) this.finish(j).reject(err);
      for (const w of this.readyWaiters.splice(0)) w.reject(err);
    }
  }

  private onMessage(slot: Slot, m: WorkerReply): void {
    if (m.type === "ready") {
      slot.state = "ready";
      this.loads[m.source] += 1;
      this.spawnDeferred();
      for (const w of this.readyWaiters.splice(0)) w.resolve();
      this.dispatch();
      return;
    }
    const job = slot.job;
    if (!job || job.id !== m.id) return;
    slot.job = undefined;
    this.finish(job);
    if (m.type === "result") job.resolve(m.result);
    else {
      if (m.error.code === "fatal") this.restart(slot);
      job.reject(errorOf(m.error));
    }
    this.dispatch();
  }

  /** Resolves once a query worker has loaded the store; rejects when none could (or the backend closed first). */
  whenReady(): Promise<void> {
    if (this.slots.some((s) => s.state === "ready")) return Promise.resolve();
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  /**
   * Queues a read for a worker, in its tenant's queue (tenants are served round robin). Waiting is bounded
   * apart from running: a query still waiting after `queueTimeoutMs`, or past the tenant's queue cap, is
   * RESOURCE_EXHAUSTED with a retry delay (the query never ran, so it is not too slow: the engine is busy,
   * mostly with the tenant's own queries, and a later retry can succeed); once on a worker it may run
   * `opts.timeoutMs` (then DEADLINE_EXCEEDED).
   */
  private run(request: WorkerRequest, opts: GraphQueryOptions): Promise<unknown> {
    this.assertOpen();
    this.beginLoading();
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const tenant = opts.tenant ?? "";
    if (this.queue.waiting(tenant) >= this.maxQueuedPerTenant) {
      return Promise.reject(
        new ResourceExhaustedError(
          `more than ${this.maxQueuedPerTenant} graph queries of this caller are waiting; retry when some have answered`,
          1000,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const job: Job = { id: ++this.nextId, tenant, timeoutMs: opts.timeoutMs, request, resolve, reject, signal, queuedAt: 0 };
      this.startWaiting(job);
      if (signal) {
        job.onAbort = () => this.abandon(job, abortReason(signal));
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.queue.push(tenant, job);
      this.reviveDeadSlots();
      this.dispatch();
    });
  }

  /** Starts (or restarts, after a preemption) the bound on a job's wait for a worker. */
  private startWaiting(job: Job): void {
    job.queuedAt = performance.now();
    job.timer = setTimeout(
      () =>
        this.abandon(
          job,
          new ResourceExhaustedError(
            `the graph engine is busy: the query waited ${this.queueTimeoutMs} ms for a worker without starting`,
            1000,
          ),
        ),
      this.queueTimeoutMs,
    );
  }

  /** Gives up on a job: a queued one leaves the queue, a running one takes its worker down with it. */
  private abandon(job: Job, err: Error): void {
    this.finish(job);
    const slot = job.slot;
    if (slot && slot.job === job) {
      slot.job = undefined;
      this.restart(slot);
    } else this.queue.remove(job.tenant, job);
    job.reject(err);
    this.dispatch();
  }

  private finish(job: Job): Job {
    clearTimeout(job.timer);
    if (job.signal && job.onAbort) job.signal.removeEventListener("abort", job.onAbort);
    return job;
  }

  private reviveDeadSlots(): void {
    for (let i = 0; i < this.slots.length; i++) {
      if (this.slots[i].state === "dead") this.slots[i] = this.spawn();
    }
  }

  /** The running queries of each tenant, the longest-running first. */
  private running(): Map<string, Job[]> {
    const byTenant = new Map<string, Job[]>();
    for (const slot of this.slots) {
      const job = slot.job;
      if (!job) continue;
      const jobs = byTenant.get(job.tenant);
      if (jobs) jobs.push(job);
      else byTenant.set(job.tenant, [job]);
    }
    for (const jobs of byTenant.values()) jobs.sort((x, y) => (x.startedAt ?? 0) - (y.startedAt ?? 0));
    return byTenant;
  }

  /**
   * Gives each free loaded worker to the waiting tenant that holds the fewest workers (round robin among
   * equals), so a tenant with queries waiting gets the next free worker before one already holding some.
   */
  private dispatch(): void {
    const running = this.running();
    const held = (tenant: string) => running.get(tenant)?.length ?? 0;
    for (const slot of this.slots) {
      if (this.queue.size === 0) break;
      if (slot.state !== "ready" || slot.job) continue;
      const job = this.queue.shift(held) as Job;
      job.slot = slot;
      slot.job = job;
      job.startedAt = performance.now();
      const jobs = running.get(job.tenant);
      if (jobs) jobs.push(job);
      else running.set(job.tenant, [job]);
      // The time limit counts from here: waiting for the worker was bounded apart.
      clearTimeout(job.timer);
      job.timer = setTimeout(
        () => this.abandon(job, new DeadlineExceededError(`the graph query ran past its time limit of ${job.timeoutMs} ms`)),
        job.timeoutMs,
      );
      slot.worker.postMessage({ ...job.request, id: job.id });
    }
    this.scheduleRebalance(running);
  }

  /**
   * Fair sharing of the pool (issue 24, finding 11). Dispatch alone cannot keep one tenant from holding
   * every worker: a tenant alone takes them all, and its slow queries then keep them until their time
   * limits while a tenant arriving later waits. So a running query can be preempted: when tenant W has had
   * a query waiting for a slice (`sliceMs`), and tenant T holds every worker or at least two more than W,
   * T's most recently started query (never T's longest-running one) is stopped once it has run a slice
   * (its worker is replaced by a loaded spare, as at a time limit) and put back at the head of T's queue;
   * the freed worker goes to W (it holds fewer). A rerun gets its full time limit (the first run's work
   * was lost). Chosen over a fixed cap of workers-1 per tenant because a cap either idles a worker while
   * one tenant is alone or cannot free one for a tenant that arrives later. Progress: preemption only moves
   * the pool toward equal shares (T keeps at least as many as W gets, so two tenants never take workers
   * from each other in turn), and T's longest-running query is never the one stopped, so T's queries end in
   * turn. On a pool of one worker T's lone query is preempted at most once (else two slow tenants would stop
   * each other for ever): it yields once to W, then runs to its end or its time limit.
   */
  private scheduleRebalance(running: Map<string, Job[]>): void {
    clearTimeout(this.preemptTimer);
    this.preemptTimer = undefined;
    if (this.closed || this.queue.size === 0 || running.size === 0) return;
    const now = performance.now();
    const step = nextPreemption(
      this.queue.heads(),
      running,
      (tenant) => running.get(tenant)?.length ?? 0,
      this.slots.length,
      this.sliceMs,
      now,
    );
    if (step && "victim" in step) this.preempt(step.victim);
    else if (step) {
      this.preemptTimer = setTimeout(() => this.dispatch(), Math.max(1, Math.ceil(step.at - now)));
      this.preemptTimer.unref();
    }
  }

  /** Stops a running query for another tenant: its worker is replaced, and it waits again at the head of its tenant's queue. */
  private preempt(job: Job): void {
    const slot = job.slot as Slot;
    slot.job = undefined;
    job.slot = undefined;
    job.preempted = true;
    this.preemptions += 1;
    this.restart(slot);
    clearTimeout(job.timer);
    this.startWaiting(job);
    this.queue.unshift(job.tenant, job);
    this.dispatch();
  }
}
