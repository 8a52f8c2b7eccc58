import { AcmsError, InvalidArgumentError, UnavailableError } from "../../domain/errors.js";
import { inspectSparqlQuery } from "../../domain/inspect-sparql-query.js";
import type { RdfTerm, RdfTriple } from "../../domain/rdf-term.js";
import { requireText } from "../../domain/request-limits.js";
import { scopeSparqlDataset, type ScopedDataset } from "../../domain/scope-sparql-dataset.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { graphIri, resourceIdOfGraphIri } from "../../domain/uko-uri.js";
import { isUlid } from "../../domain/ulid-id.js";
import { FairSlots, type SlotAttempt } from "../kit/fair-slots.js";
import type {
  GraphBackend,
  GraphQueryOptions,
  GraphQueryResult,
  GraphTriple,
  GraphTriplesResult,
  SparqlRow,
} from "../../ports/graph-backend.js";
import {
  TYPED_PREFIX,
  VERBATIM_PREFIX,
  nodeTerm,
  normaliseTriple,
  sparqlTerm,
  storedTerm,
  termOfJson,
  termOfNTriples,
  typedCopy,
} from "./endpoint-terms.js";
import { rewriteForVirtuoso } from "./rewrite-for-virtuoso.js";
import { SparqlHttpClient, type SparqlResponse } from "./sparql-http-client.js";
import { askAnswer, readNTriples, readSparqlJsonResults } from "./sparql-results-reader.js";

/** The longest SPARQL query accepted, in characters (as the embedded engine). */
export const MAX_SPARQL_LENGTH = 64 * 1024;

/** The default cap on rows or triples of one answer (as the embedded engine). */
export const DEFAULT_GRAPH_MAX_RESULTS = 10_000;

/** The longest GetTriples subject or Traverse start accepted. */
export const MAX_NODE_LENGTH = 64 * 1024;

/**
 * The graph that stands for "no graph" in a dataset. Why: a protocol request without `default-graph-uri`
 * or `named-graph-uri` gets the endpoint's own dataset (on Virtuoso: every graph), so an empty list is
 * sent as this one graph, which nothing ever writes.
 */
export const EMPTY_GRAPH = "urn:x-acms:empty-dataset";

/** The graph holding the write generation (one triple), outside every resource graph and every dataset. */
export const META_GRAPH = "urn:x-acms:service-meta";
const GENERATION = "urn:x-acms:generation";
/** Marks a store whose typed literals all have their exact copies (`copyTypedLiteralsOnce`). */
const TYPED_COPIES = "urn:x-acms:typed-copies";

/** Options of the SPARQL endpoint adapter. */
export interface SparqlEndpointGraphBackendOptions {
  /** The SPARQL 1.1 Protocol query URL (e.g. Virtuoso's `http://host:8890/sparql-auth`). */
  queryUrl: string;
  /** The SPARQL 1.1 Protocol update URL (on Virtuoso the same as the query URL). */
  updateUrl: string;
  user?: string;
  password?: string;
  /** The most rows or triples one answer carries; more makes it non-exhaustive. */
  maxResults?: number;
  /**
   * Connections kept to the endpoint, at most (default: `concurrency` + DEFAULT_ENDPOINT_WRITE_CONNECTIONS,
   * so writes and the generation's reads never wait behind queries).
   */
  maxConnections?: number;
  /**
   * Queries sent to the endpoint at once (default DEFAULT_ENDPOINT_CONCURRENCY); more wait, each caller in
   * its own queue, and no caller keeps every one while another waits (`FairSlots`).
   */
  concurrency?: number;
  /** How long a query may wait for its turn, in ms (default 30 s), before it is RESOURCE_EXHAUSTED. */
  queueTimeoutMs?: number;
  /** The most queries one caller may have waiting (default 64). */
  maxQueuedPerTenant?: number;
  /** The slice, in ms (default 250): a query that has run this long may be stopped for a caller that has waited this long. */
  sliceMs?: number;
  /** Largest SPARQL Update request body, in bytes, before a write is split (default 1 MiB). */
  maxUpdateBytes?: number;
  /** Time limit of the adapter's own requests (writes, the generation), in ms (default 60 s). */
  writeTimeoutMs?: number;
}

/** Queries sent to the endpoint at once, by default. */
export const DEFAULT_ENDPOINT_CONCURRENCY = 8;
/** Connections kept beyond the query slots, for writes and the adapter's own reads. */
export const DEFAULT_ENDPOINT_WRITE_CONNECTIONS = 4;

const ACCEPT_RESULTS = "application/sparql-results+json";
const ACCEPT_TRIPLES = "application/n-triples, text/plain;q=0.5";

function parseUrl(value: string, name: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${name} must be an http or https URL`);
  return url;
}

/**
 * The graph backend over any SPARQL 1.1 Protocol endpoint (tested on Virtuoso Open Source 7), one named
 * graph per resource (`uko://<ulid>/`).
 *
 * Scope: a query is inspected exactly as the embedded engine does (`inspectSparqlQuery`,
 * `scopeSparqlDataset`: updates, SERVICE and LOAD refused, FROM / FROM NAMED / GRAPH <iri> outside the
 * scope a ScopeViolation) before anything is sent, then sent with its dataset fixed by the protocol's
 * `default-graph-uri` and `named-graph-uri` parameters: every in-scope graph, or the in-scope graphs the
 * query's own FROM / FROM NAMED name. Both lists are always sent (an empty one as `EMPTY_GRAPH`), since
 * an endpoint fills a missing list with its own default dataset. Virtuoso unions the protocol's graphs
 * with the query's FROM instead of replacing them (the protocol says replace); the two are equal here,
 * so that changes nothing. On top, the endpoint user's graph permissions (README, "Graph on a SPARQL
 * endpoint") keep graphs the service does not manage unreadable even to a query that reached them.
 *
 * Writes are SPARQL Update into `uko://<resource>/`, split into requests of at most `maxUpdateBytes`; a
 * replace larger than one request is written into a staging graph and moved over the resource's graph
 * in one `MOVE` at the end, so readers see the old or the new graph, never half of one. Blank nodes are
 * stored skolemised (`endpoint-terms.ts`). The write generation lives in the endpoint (`META_GRAPH`) and
 * is bumped in the same request as a write's last part, so replicas and restarts share it.
 *
 * Reads stream the endpoint's answer (SPARQL JSON results, N-Triples) and stop reading past the row
 * cap. Every request has a deadline (`timeoutMs`) and the caller's AbortSignal, which tear the HTTP
 * request down; queries run concurrently over a bounded keep-alive pool.
 *
 * Fair sharing (issue 24, finding 11): reads (SPARQL, GetTriples, Traverse) take one of `concurrency`
 * slots (`FairSlots`, the rule of the embedded graph pool): each caller waits in its own queue, a free slot
 * goes to the caller holding the fewest, and a caller holding every slot (or two more than one waiting)
 * has its newest query stopped after a slice and queued again, so another caller's query waits about a
 * slice, never a slow query's time limit. Stopping a query tears its HTTP request down: Virtuoso mostly
 * stops a query whose client left within a second, but not always, and the query also carries its own
 * time limit (`timeout`), which Virtuoso enforces whatever the client does; until that limit has passed a
 * stopped query counts against its caller (`lingerMs`), so no caller ever has more than `concurrency`
 * queries on the endpoint. Writes do not queue there: they have connections of their own.
 * @example const graph = await SparqlEndpointGraphBackend.open({ queryUrl, updateUrl: queryUrl, user, password });
 */
export class SparqlEndpointGraphBackend implements GraphBackend {
  private readonly http: SparqlHttpClient;
  private readonly queryUrl: URL;
  private readonly updateUrl: URL;
  private readonly cap: number;
  private readonly maxUpdateBytes: number;
  private readonly writeTimeoutMs: number;
  private readonly slots: FairSlots;
  private seq = 0n;
  private closed = false;

  private constructor(opts: SparqlEndpointGraphBackendOptions) {
    this.queryUrl = parseUrl(opts.queryUrl, "the SPARQL query URL");
    this.updateUrl = parseUrl(opts.updateUrl, "the SPARQL update URL");
    this.cap = opts.maxResults ?? DEFAULT_GRAPH_MAX_RESULTS;
    this.maxUpdateBytes = opts.maxUpdateBytes ?? 1024 * 1024;
    this.writeTimeoutMs = opts.writeTimeoutMs ?? 60_000;
    const concurrency = Math.max(1, opts.concurrency ?? DEFAULT_ENDPOINT_CONCURRENCY);
    const maxSockets = Math.max(1, opts.maxConnections ?? concurrency + DEFAULT_ENDPOINT_WRITE_CONNECTIONS);
    this.http = new SparqlHttpClient({ user: opts.user, password: opts.password, maxSockets });
    this.slots = new FairSlots({
      slots: concurrency,
      queueTimeoutMs: opts.queueTimeoutMs ?? 30_000,
      maxQueuedPerTenant: opts.maxQueuedPerTenant ?? 64,
      sliceMs: Math.max(1, opts.sliceMs ?? 250),
      what: "graph query",
      // Virtuoso mostly stops a query whose client left within a second, but not always (measured: some ran
      // on to its own limit); the `timeout` each query carries ends it at the latest (about a second late).
      lingerMs: 2_000,
    });
  }

  /** Queries stopped for another caller and queued again (tests and the bench read it). */
  get preemptions(): number {
    return this.slots.preemptions;
  }

  /** Connects to the endpoint and reads the write generation (creating it on first use). */
  static async open(opts: SparqlEndpointGraphBackendOptions): Promise<SparqlEndpointGraphBackend> {
    const backend = new SparqlEndpointGraphBackend(opts);
    try {
      const current = await backend.readGeneration();
      if (current === undefined) {
        await backend.update(`INSERT DATA { GRAPH <${META_GRAPH}> { <${META_GRAPH}> <${GENERATION}> 0 } }`);
        backend.seq = (await backend.readGeneration()) ?? 0n;
      } else backend.seq = current;
      await backend.copyTypedLiteralsOnce();
    } catch (err) {
      await backend.close();
      throw err;
    }
    return backend;
  }

  generation(): bigint {
    return this.seq;
  }

  async putTriples(resourceId: string, triples: readonly RdfTriple[], replace: boolean): Promise<number> {
    this.assertOpen();
    const graph = this.graphOf(resourceId);
    const typed = typedGraphOf(resourceId);
    const unique = new Map<string, Line>();
    triples.forEach((t, i) => {
      const n = normaliseTriple(t, `triples[${i}]`);
      const head = `${sparqlTerm(n.subject)} ${sparqlTerm(n.predicate)}`;
      const copy = typedCopy(n.object);
      // Keyed by the term as written: two literals stored alike (PT60M and PT1H) each keep their copy.
      unique.set(`${head} ${sparqlTerm(n.object)}`, {
        text: `${head} ${storedTerm(n.object)} .`,
        copy: copy === undefined ? undefined : `${head} ${copy} .`,
      });
    });
    const lines = [...unique.values()];
    const batches = this.batches(lines);
    if (batches.length <= 1) {
      const parts: string[] = [];
      if (replace) parts.push(`DROP SILENT GRAPH <${graph}>`, `DROP SILENT GRAPH <${typed}>`);
      if (batches.length === 1) parts.push(insertData(graph, typed, batches[0]));
      parts.push(BUMP_GENERATION);
      await this.update(parts.join(" ;\n"));
    } else {
      const stage = `urn:x-acms:staging:${resourceId}:${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
      const [target, typedTarget] = replace ? [stage, `${stage}:typed`] : [graph, typed];
      const dropStage = `DROP SILENT GRAPH <${target}> ;\nDROP SILENT GRAPH <${typedTarget}>`;
      try {
        if (replace) await this.update(dropStage);
        for (let i = 0; i < batches.length - 1; i++) await this.update(insertData(target, typedTarget, batches[i]));
        const last = insertData(target, typedTarget, batches[batches.length - 1]);
        const move = `MOVE SILENT <${target}> TO <${graph}> ;\nMOVE SILENT <${typedTarget}> TO <${typed}>`;
        await this.update(replace ? `${last} ;\n${move} ;\n${BUMP_GENERATION}` : `${last} ;\n${BUMP_GENERATION}`);
      } catch (err) {
        if (replace) await this.update(dropStage).catch(() => undefined);
        throw err;
      }
    }
    await this.refreshGeneration();
    return lines.length;
  }

  async clearResource(resourceId: string): Promise<void> {
    this.assertOpen();
    const graph = this.graphOf(resourceId);
    await this.update(`DROP SILENT GRAPH <${graph}> ;\nDROP SILENT GRAPH <${typedGraphOf(resourceId)}> ;\n${BUMP_GENERATION}`);
    await this.refreshGeneration();
  }

  /**
   * Counts the resource's triples, then drops its graph and its typed-literal graph in one update with the
   * generation's bump. (A staging graph that a large replace interrupted by a crash left behind is named
   * `urn:x-acms:staging:<id>:...` and is in no dataset; finding it would scan the endpoint: not done here.)
   */
  async eraseResource(resourceId: string): Promise<number> {
    this.assertOpen();
    const graph = this.graphOf(resourceId);
    const typed = typedGraphOf(resourceId);
    const deadline = Date.now() + this.writeTimeoutMs;
    const count = `SELECT (COUNT(*) AS ?n) WHERE { GRAPH <${graph}> { ?s ?p ?o } }`;
    const res = await this.send(
      this.queryUrl,
      queryBody(count, { defaultGraphs: [], namedGraphs: [graph] }),
      ACCEPT_RESULTS,
      "update",
      deadline,
    );
    const read = await this.read(res, (body) => readSparqlJsonResults(body, 10, res.stop));
    const n = read.kind === "bindings" && read.rows.length > 0 ? Number(read.rows[0].n?.value ?? "0") : 0;
    await this.update(`DROP SILENT GRAPH <${graph}> ;\nDROP SILENT GRAPH <${typed}> ;\n${BUMP_GENERATION}`);
    await this.refreshGeneration();
    return Number.isFinite(n) ? n : 0;
  }

  async query(view: ScopedBackendView, sparql: string, opts: GraphQueryOptions): Promise<GraphQueryResult> {
    this.assertOpen();
    requireText("query", sparql, MAX_SPARQL_LENGTH);
    const inspection = inspectSparqlQuery(sparql);
    const dataset = scopeSparqlDataset(inspection, view);
    const text = rewriteForVirtuoso(sparql);
    return this.inSlot(opts, (attempt) => this.runQuery(inspection.form, text, dataset, attempt));
  }

  /** One attempt of a scoped query (`query` checked it and holds its slot). */
  private async runQuery(form: string, text: string, dataset: ScopedDataset, attempt: SlotAttempt): Promise<GraphQueryResult> {
    const { deadline, signal, timeoutMs } = attempt;
    if (form === "CONSTRUCT" || form === "DESCRIBE") {
      const res = await this.send(this.queryUrl, queryBody(text, dataset, timeoutMs), ACCEPT_TRIPLES, "query", deadline, signal);
      const read = await this.read(res, (body) => readNTriples(body, this.cap, res.stop));
      const triples = read.triples.map(([s, p, o]) => ({
        subject: termOfNTriples(s),
        predicate: termOfNTriples(p),
        object: termOfNTriples(o),
      }));
      return { form, triples, exhaustive: read.exhaustive };
    }
    const res = await this.send(this.queryUrl, queryBody(text, dataset, timeoutMs), ACCEPT_RESULTS, "query", deadline, signal);
    const read = await this.read(res, (body) => readSparqlJsonResults(body, this.cap, res.stop));
    if (form === "ASK") {
      const answer = askAnswer(read);
      if (answer === undefined) throw new UnavailableError("the SPARQL endpoint answered an ASK query without a boolean");
      return { form: "ASK", boolean: answer, exhaustive: true };
    }
    if (read.kind !== "bindings") throw new UnavailableError("the SPARQL endpoint answered a SELECT query without bindings");
    const rows: SparqlRow[] = read.rows.map((b) => {
      const row: SparqlRow = {};
      for (const name of Object.keys(b)) row[name] = termOfJson(b[name]);
      return row;
    });
    return { form: "SELECT", variables: read.variables, rows, exhaustive: read.exhaustive };
  }

  async getTriples(view: ScopedBackendView, subject: string, opts: GraphQueryOptions): Promise<GraphTriplesResult> {
    return this.walk(view, checkedNode(subject, "subject"), 0, opts);
  }

  async traverse(view: ScopedBackendView, start: string, depth: number, opts: GraphQueryOptions): Promise<GraphTriplesResult> {
    if (!Number.isInteger(depth) || depth < 0) throw InvalidArgumentError.field("depth", `must be 0 or more, got ${depth}`);
    return this.walk(view, checkedNode(start, "start"), depth, opts);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.slots.close(new UnavailableError("the graph backend is closed"));
    this.http.close();
  }

  /** Runs a read in one of the fair slots, as the caller `opts.tenant`. */
  private inSlot<T>(opts: GraphQueryOptions, task: (attempt: SlotAttempt) => Promise<T>): Promise<T> {
    return this.slots.run({ tenant: opts.tenant ?? "", timeoutMs: opts.timeoutMs, signal: opts.signal }, task);
  }

  /**
   * Breadth first from `start`, one scoped query per hop (the frontier in VALUES, in slices), over the
   * in-scope graphs as named graphs, so each triple comes with its graph for the leak guard.
   */
  private async walk(view: ScopedBackendView, start: RdfTerm, depth: number, opts: GraphQueryOptions): Promise<GraphTriplesResult> {
    this.assertOpen();
    if (view.resourceIds.length === 0) return { triples: [], exhaustive: true };
    return this.inSlot(opts, (attempt) => this.walkOnce(view, start, depth, attempt));
  }

  /** One attempt of a walk (`walk` holds its slot). */
  private async walkOnce(view: ScopedBackendView, start: RdfTerm, depth: number, attempt: SlotAttempt): Promise<GraphTriplesResult> {
    const { deadline, signal } = attempt;
    const graphs = [...view.resourceIds.map(graphIri), ...view.resourceIds.map(typedGraphOf)];
    const dataset: ScopedDataset = { defaultGraphs: [], namedGraphs: graphs };
    const key = (t: RdfTerm) => `${t.kind} ${t.value}`;
    const seen = new Set<string>();
    const visited = new Set([key(start)]);
    const triples: GraphTriple[] = [];
    let frontier: RdfTerm[] = [start];
    for (let hop = 0; hop <= depth && frontier.length > 0; hop++) {
      const next: RdfTerm[] = [];
      for (let at = 0; at < frontier.length; at += FRONTIER_SLICE) {
        const slice = frontier.slice(at, at + FRONTIER_SLICE);
        const q = `SELECT ?s ?g ?p ?o WHERE { VALUES ?s { ${slice.map(sparqlTerm).join(" ")} } GRAPH ?g { ?s ?p ?o } ${EXACT_OBJECTS} }`;
        const res = await this.send(this.queryUrl, queryBody(q, dataset, deadline - Date.now()), ACCEPT_RESULTS, "query", deadline, signal);
        const read = await this.read(res, (body) => readSparqlJsonResults(body, Number.MAX_SAFE_INTEGER, res.stop));
        if (read.kind !== "bindings") throw new UnavailableError("the SPARQL endpoint answered a SELECT query without bindings");
        for (const b of read.rows) {
          const subject = termOfJson(b.s);
          const predicate = termOfJson(b.p);
          const object = termOfJson(b.o);
          const graph = b.g.value;
          const tripleKey = `${key(subject)}\u0000${predicate.value}\u0000${key(object)}\u0000${object.datatype ?? ""}\u0000${object.language ?? ""}`;
          if (!seen.has(tripleKey)) {
            if (triples.length >= this.cap) return { triples, exhaustive: false };
            seen.add(tripleKey);
            triples.push({ subject, predicate, object, resourceId: resourceOfGraph(graph) });
          }
          if (hop < depth && object.kind !== "literal" && !visited.has(key(object))) {
            visited.add(key(object));
            next.push(object);
          }
        }
      }
      frontier = next;
    }
    return { triples, exhaustive: true };
  }

  private batches(lines: readonly Line[]): Line[][] {
    const out: Line[][] = [];
    let current: Line[] = [];
    let bytes = 0;
    for (const line of lines) {
      const size = (Buffer.byteLength(line.text, "utf8") + (line.copy === undefined ? 0 : Buffer.byteLength(line.copy, "utf8"))) * 3 + 2;
      if (current.length > 0 && bytes + size > this.maxUpdateBytes) {
        out.push(current);
        current = [];
        bytes = 0;
      }
      current.push(line);
      bytes += size;
    }
    if (current.length > 0) out.push(current);
    return out;
  }

  private async update(sparql: string): Promise<void> {
    const res = await this.send(this.updateUrl, `update=${encodeURIComponent(sparql)}`, "*/*", "update", Date.now() + this.writeTimeoutMs);
    await this.read(res, async (body) => {
      for await (const _ of body) {
        // The endpoint's report of the update is not needed: success is the status.
      }
    });
  }

  private async readGeneration(): Promise<bigint | undefined> {
    const q = `SELECT ?n WHERE { GRAPH <${META_GRAPH}> { <${META_GRAPH}> <${GENERATION}> ?n } }`;
    const dataset: ScopedDataset = { defaultGraphs: [], namedGraphs: [META_GRAPH] };
    const res = await this.send(this.queryUrl, queryBody(q, dataset), ACCEPT_RESULTS, "update", Date.now() + this.writeTimeoutMs);
    const read = await this.read(res, (body) => readSparqlJsonResults(body, 10, res.stop));
    if (read.kind !== "bindings" || read.rows.length === 0) return undefined;
    const values = read.rows.map((r) => BigInt(Math.trunc(Number(r.n?.value ?? "0"))));
    return values.reduce((a, b) => (b > a ? b : a), 0n);
  }

  /**
   * Gives a store written before typed-literal graphs existed its exact copies, once (a marker in
   * `META_GRAPH` says it is done): every typed literal of every resource graph is copied in the form the
   * endpoint kept (the lexical form written is gone), so GetTriples and Traverse still answer it. The
   * copy is idempotent, so replicas opening at once do no harm.
   */
  private async copyTypedLiteralsOnce(): Promise<void> {
    const dataset: ScopedDataset = { defaultGraphs: [], namedGraphs: [META_GRAPH] };
    const ask = `ASK { GRAPH <${META_GRAPH}> { <${META_GRAPH}> <${TYPED_COPIES}> ?done } }`;
    const res = await this.send(this.queryUrl, queryBody(ask, dataset), ACCEPT_RESULTS, "update", Date.now() + this.writeTimeoutMs);
    const read = await this.read(res, (body) => readSparqlJsonResults(body, 10, res.stop));
    if (askAnswer(read)) return;
    const copy = `INSERT { GRAPH ?tg { ?s ?p ?c } } WHERE { GRAPH ?g { ?s ?p ?o }
  FILTER(STRSTARTS(STR(?g), "uko://") && isLiteral(?o) && lang(?o) = "" && datatype(?o) != <http://www.w3.org/2001/XMLSchema#string> && !STRSTARTS(STR(datatype(?o)), "${TYPED_PREFIX}") && !STRSTARTS(STR(datatype(?o)), "${VERBATIM_PREFIX}"))
  BIND(IRI(CONCAT("${TYPED_GRAPH_PREFIX}", STRBEFORE(STRAFTER(STR(?g), "uko://"), "/"))) AS ?tg)
  BIND(STRDT(STR(?o), IRI(CONCAT("${TYPED_PREFIX}", STR(datatype(?o))))) AS ?c) }`;
    const done = `INSERT DATA { GRAPH <${META_GRAPH}> { <${META_GRAPH}> <${TYPED_COPIES}> 1 } }`;
    const body = `update=${encodeURIComponent(`${copy} ;\n${done}`)}`;
    const upd = await this.send(this.updateUrl, body, "*/*", "update", Date.now() + Math.max(this.writeTimeoutMs, 600_000));
    await this.read(upd, async (stream) => {
      for await (const _ of stream) {
        // Success is the status.
      }
    });
  }

  private async refreshGeneration(): Promise<void> {
    const current = await this.readGeneration();
    this.seq = current !== undefined && current > this.seq ? current : this.seq + 1n;
  }

  private send(
    url: URL,
    body: string,
    accept: string,
    kind: "query" | "update",
    deadline: number,
    signal?: AbortSignal,
  ): Promise<SparqlResponse> {
    return this.http.send({ url, body, accept, kind, deadline, signal });
  }

  /** Streams a response's body through `reader`, translating a deadline or cancellation during the read. */
  private async read<T>(res: SparqlResponse, reader: (body: AsyncIterable<string>) => Promise<T>): Promise<T> {
    res.message.setEncoding("utf8");
    try {
      return await reader(res.message as AsyncIterable<string>);
    } catch (err) {
      if (err instanceof AcmsError) throw err;
      throw res.failure(err);
    } finally {
      res.done();
    }
  }

  private graphOf(resourceId: string): string {
    if (!isUlid(resourceId)) throw InvalidArgumentError.field("resource_id", `"${resourceId.slice(0, 60)}" is not a ULID`);
    return graphIri(resourceId);
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError("the graph backend is closed");
  }
}

/**
 * The walk's objects in the form written: IRIs, blank nodes, plain and language-tagged literals from the
 * resource's graph, typed literals from their exact copies in its typed-literal graph (not the value
 * Virtuoso keeps in the resource's graph).
 */
const EXACT_OBJECTS = `FILTER(!isLiteral(?o) || lang(?o) != "" || datatype(?o) = <http://www.w3.org/2001/XMLSchema#string> || STRSTARTS(STR(datatype(?o)), "${TYPED_PREFIX}"))`;

/** Nodes per Traverse query (a VALUES list of that many terms). */
const FRONTIER_SLICE = 200;

const BUMP_GENERATION = `DELETE { GRAPH <${META_GRAPH}> { <${META_GRAPH}> <${GENERATION}> ?n } } INSERT { GRAPH <${META_GRAPH}> { <${META_GRAPH}> <${GENERATION}> ?m } } WHERE { GRAPH <${META_GRAPH}> { <${META_GRAPH}> <${GENERATION}> ?n } BIND(?n + 1 AS ?m) }`;

/** A triple as written into its resource's graph, and its typed literal's exact copy, if it has one. */
interface Line {
  text: string;
  copy: string | undefined;
}

/** The typed-literal graph of a resource: exact copies of its typed literals (`TYPED_PREFIX`). */
const TYPED_GRAPH_PREFIX = "urn:x-acms:typed-literals:";

function typedGraphOf(resourceId: string): string {
  return `${TYPED_GRAPH_PREFIX}${resourceId}`;
}

/** The resource a graph of the walk belongs to: its own graph or its typed-literal graph. */
function resourceOfGraph(graph: string): string {
  if (graph.startsWith(TYPED_GRAPH_PREFIX)) return graph.slice(TYPED_GRAPH_PREFIX.length);
  return resourceIdOfGraphIri(graph) ?? graph;
}

function insertData(graph: string, typed: string, lines: readonly Line[]): string {
  const copies = lines.flatMap((l) => (l.copy === undefined ? [] : [l.copy]));
  const typedPart = copies.length > 0 ? ` GRAPH <${typed}> {\n${copies.join("\n")}\n}` : "";
  return `INSERT DATA { GRAPH <${graph}> {\n${lines.map((l) => l.text).join("\n")}\n}${typedPart} }`;
}

function checkedNode(value: string, field: string): RdfTerm {
  if (value.length === 0) throw InvalidArgumentError.field(field, "must not be empty");
  if (value.length > MAX_NODE_LENGTH)
    throw InvalidArgumentError.field(field, `must be at most ${MAX_NODE_LENGTH} characters, got ${value.length}`);
  return nodeTerm(value, field);
}

/**
 * The form body of a query: the query and its dataset as protocol parameters (an empty list as
 * `EMPTY_GRAPH`), plus `timeout` (ms), which Virtuoso reads as the query's own time limit so a stopped
 * query stops working on the endpoint too; other endpoints ignore it.
 */
function queryBody(sparql: string, dataset: ScopedDataset, timeoutMs?: number): string {
  const parts = [`query=${encodeURIComponent(sparql)}`];
  const defaults = dataset.defaultGraphs.length > 0 ? dataset.defaultGraphs : [EMPTY_GRAPH];
  const named = dataset.namedGraphs.length > 0 ? dataset.namedGraphs : [EMPTY_GRAPH];
  for (const g of defaults) parts.push(`default-graph-uri=${encodeURIComponent(g)}`);
  for (const g of named) parts.push(`named-graph-uri=${encodeURIComponent(g)}`);
  if (timeoutMs !== undefined) parts.push(`timeout=${Math.max(1, Math.floor(timeoutMs))}`);
  return parts.join("&");
}
