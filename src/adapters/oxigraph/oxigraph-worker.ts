/**
 * The Oxigraph query worker: a real, type-checked module whose one function, `runOxigraphWorker`, is the
 * worker's whole program. The main thread starts it from its own compiled text (`oxigraphWorkerSource`) with
 * `new Worker(source, { eval: true, workerData })`.
 *
 * Why a worker: Oxigraph's JavaScript bindings evaluate a query synchronously, so a slow query run on the
 * main thread would block every other call. The worker owns an in-memory Oxigraph store; the main thread
 * can terminate it at a query's time limit (the only way to stop a running query) and start a fresh one.
 *
 * Why started from a function's text: the worker must start the same way under tsx, ts-jest and the
 * compiled bundle, with no TypeScript loader in the worker and no path to its own file. So
 * `runOxigraphWorker` is self-contained: it uses its parameter (the worker's `require`), `workerData` and
 * globals only, never this module's imports or constants (`import type` is erased and so is safe); its
 * dependencies come as absolute paths in `workerData` (`oxigraphPath`, `sqlitePath`), resolved by the main
 * thread. A reference to anything outside it fails the worker at start, which every graph test would show.
 *
 * Protocol (all messages are plain objects):
 * - at start it loads every triple and posts `{ type: "ready", seq, size, source }`: from the snapshot file
 *   `snapshotPath` when that was written at the write sequence number SQLite holds now (`source`
 *   "snapshot": the N-Quads text of every triple without a blank node, which the first worker to load
 *   from SQLite writes, so the other workers, spares and the next start parse one file instead of each
 *   reading and converting every row), else from the SQLite file `dbPath` (the source of truth, read in
 *   one transaction together with the write sequence number; `source` "sqlite"), writing the snapshot.
 *   Triples with a blank node are always read from SQLite (a partial index holds them) and added term by
 *   term, as Oxigraph's parser renames blank nodes;
 * - `{ type: "write", seq, graph, replace, rows }` and `{ type: "clear", seq, graph }` apply a committed
 *   write; one whose `seq` the loaded snapshot already holds is skipped, so a write posted while the
 *   worker was loading is applied exactly once;
 * - `{ type: "query", id, ... }` runs SPARQL on the store; `{ type: "traverse", id, ... }` (GetTriples and
 *   Traverse) reads the stored rows through the worker's own read-only SQLite connection, so those terms
 *   come back exactly as written (the store keeps typed literals such as "05"^^xsd:int by value, and
 *   SPARQL answers give them in canonical form, "5"^^xsd:integer). Either answers `{ type: "result", id, result }` or
 *   `{ type: "error", id, error: { code, message } }` with code `syntax` (the query does not parse),
 *   `query` (the engine refused to evaluate it), `unrepresentable` (a result term the wire cannot carry),
 *   `too_large` (the answer does not fit in memory) or `fatal` (the engine is in an unknown state: the
 *   main thread replaces the worker).
 *
 * A row is `[subjectKind, subject, predicate, objectKind, object, datatype, language]`, kinds 0 = IRI,
 * 1 = blank node, 2 = literal, and '' for an absent datatype or language, as stored in SQLite.
 */

import { workerSource } from "../kit/worker-source.js";
import type BetterSqlite3 from "better-sqlite3";
import type * as Oxigraph from "oxigraph";
import type { RdfTerm, RdfTriple } from "../../domain/rdf-term.js";

/** A stored triple: `[subjectKind, subject, predicate, objectKind, object, datatype, language]`. */
export type WorkerRow = [number, string, string, number, string, string, string];

/** The absolute paths the worker loads its packages and data from. */
export interface OxigraphWorkerData {
  oxigraphPath: string;
  sqlitePath: string;
  dbPath: string;
  snapshotPath: string;
}

/** A query or traversal the main thread asks for. */
export type WorkerRequest =
  | { type: "query"; sparql: string; form: string; defaultGraphs: string[]; namedGraphs: string[]; cap: number }
  | { type: "traverse"; start: RdfTerm; depth: number; graphs: string[]; cap: number };

/** A committed write the main thread forwards to every worker. */
export type WorkerWrite =
  { type: "write"; seq: number; graph: string; replace?: boolean; rows: WorkerRow[] } | { type: "clear"; seq: number; graph: string };

/** Why a query failed, as the worker reports it. */
export interface WorkerError {
  code: "syntax" | "query" | "unrepresentable" | "too_large" | "fatal";
  message: string;
}

/** What the worker posts. */
export type WorkerReply =
  | { type: "ready"; seq: number; size: number; source: "snapshot" | "sqlite" }
  | { type: "result"; id: number; result: unknown }
  | { type: "error"; id: number; error: WorkerError };

/** A triple a traversal found, with the graph that holds it. */
interface TraversedTriple extends RdfTriple {
  graph: string;
}

/** A SPARQL JSON results binding. */
interface JsonBinding {
  type: string;
  value: string;
  datatype?: string;
  "xml:lang"?: string;
  "its:dir"?: string;
}

/** The snapshot file being written beside the load. */
interface SnapshotOut {
  tmp: string;
  fd: number;
  failed: boolean;
}

/** The snapshot file being read, with its first chunk. */
interface SnapshotIn {
  fd: number;
  first: Buffer;
  tag: string;
}

/** A row as Oxigraph's RDF/JS conversion reads it. */
type PlainTerm =
  | { termType: "NamedNode" | "BlankNode"; value: string }
  | { termType: "Literal"; value: string; language: string; datatype: { termType: "NamedNode"; value: string } };

/**
 * The worker's program. `load` is the worker's `require`. Self-contained: see the module comment.
 */
export function runOxigraphWorker(load: NodeJS.Require): void {
  const fs = load("node:fs") as typeof import("node:fs");
  const threads = load("node:worker_threads") as typeof import("node:worker_threads");
  const parentPort = threads.parentPort!;
  const threadId = threads.threadId;
  const workerData = threads.workerData as OxigraphWorkerData;
  const ox = load(workerData.oxigraphPath) as typeof Oxigraph;
  const Database = load(workerData.sqlitePath) as typeof BetterSqlite3;

  const XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";
  const RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
  class Unrepresentable extends Error {}

  /*
   * Terms handed to Oxigraph as plain RDF/JS objects, which it converts (and checks) itself: an Oxigraph
   * term object holds engine memory until a garbage collection frees it (see loadText).
   */
  function oxTerm(kind: number, value: string, datatype?: string, language?: string): PlainTerm {
    if (kind === 0) return { termType: "NamedNode", value };
    if (kind === 1) return { termType: "BlankNode", value };
    if (language) return { termType: "Literal", value, language, datatype: { termType: "NamedNode", value: RDF_LANG_STRING } };
    return { termType: "Literal", value, language: "", datatype: { termType: "NamedNode", value: datatype || XSD_STRING } };
  }

  function oxQuad(graph: string, r: WorkerRow): Oxigraph.Quad {
    const quad = {
      termType: "Quad",
      subject: oxTerm(r[0], r[1]),
      predicate: oxTerm(0, r[2]),
      object: oxTerm(r[3], r[4], r[5], r[6]),
      graph: { termType: "NamedNode", value: graph },
    };
    return quad as unknown as Oxigraph.Quad;
  }

  /** Graph IRIs as Oxigraph terms, made once: scopes name the same graphs query after query. */
  const graphNodes = new Map<string, Oxigraph.NamedNode>();
  function graphNode(iri: string): Oxigraph.NamedNode {
    let node = graphNodes.get(iri);
    if (node === undefined) {
      node = ox.namedNode(iri);
      graphNodes.set(iri, node);
    }
    return node;
  }

  /*
   * N-Quads written straight from stored rows, with no Oxigraph term made per row (making terms cost more
   * than parsing). Stored IRIs passed Oxigraph's checks when written; anything N-Quads could not carry
   * as is gets a \u escape, and the loader's own checks still run on it.
   */
  // eslint-disable-next-line no-control-regex
  const IRI_UNSAFE = /[\u0000-\u0020<>"{}|^`\\]/g;
  const LITERAL_UNSAFE = /["\\\n\r]/g;
  const LITERAL_ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r" };
  const uchar = (c: string): string => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
  function ntIri(v: string): string {
    IRI_UNSAFE.lastIndex = 0;
    return "<" + (IRI_UNSAFE.test(v) ? v.replace(IRI_UNSAFE, uchar) : v) + ">";
  }
  function ntObject(kind: number, value: string, datatype: string, language: string): string {
    if (kind === 0) return ntIri(value);
    LITERAL_UNSAFE.lastIndex = 0;
    const text = '"' + (LITERAL_UNSAFE.test(value) ? value.replace(LITERAL_UNSAFE, (c) => LITERAL_ESCAPES[c]) : value) + '"';
    if (language) return text + "@" + language;
    return datatype ? text + "^^" + ntIri(datatype) : text;
  }
  /** One N-Quads line of a triple without blank nodes, in graph g (already written as <iri>). */
  function ntLine(s: string, p: string, oKind: number, o: string, datatype: string, language: string, g: string): string {
    return ntIri(s) + " " + ntIri(p) + " " + ntObject(oKind, o, datatype, language) + " " + g + " .\n";
  }

  const isBlankRow = (r: WorkerRow): boolean => r[0] === 1 || r[3] === 1;

  /*
   * Adds the rows of one graph. Oxigraph's N-Quads loader is several times faster than adding terms one
   * at a time, but it renames blank nodes, which would change how blank nodes of separate writes join; so
   * it serves only rows without blank nodes. Text the loader refuses (its parse is stricter than term
   * construction) is added term by term, as are rows with blank nodes: adding a quad twice keeps one, so
   * whatever part of the text was loaded before the refusal changes nothing.
   */
  function addRows(target: Oxigraph.Store, graph: string, rows: readonly WorkerRow[]): void {
    const text: string[] = [];
    const blank: WorkerRow[] = [];
    const gText = ntIri(graph);
    for (const r of rows) {
      if (isBlankRow(r)) blank.push(r);
      else text.push(ntLine(r[1], r[2], r[3], r[4], r[5], r[6], gText));
    }
    if (!loadText(target, text.join(""))) for (const r of rows) if (!isBlankRow(r)) addQuad(target, graph, r);
    for (const r of blank) addQuad(target, graph, r);
  }

  /** Adds one stored row term by term. */
  function addQuad(target: Oxigraph.Store, graph: string, r: WorkerRow): void {
    target.add(oxQuad(graph, r));
  }

  /**
   * Loads N-Quads (a string, a Buffer, or an iterable of Buffers); false when the loader refused it, in
   * which case part of it may be in the store. Why without a transaction: Oxigraph's transactional load
   * keeps a log of every quad it adds, which costs about three times the parse; a refused load is
   * followed by an add of every row (or a fresh store), so atomicity is not needed. Why no Oxigraph term
   * is made on the worker's hot paths and text goes in as Buffers: each growth of the engine's WebAssembly
   * memory makes V8 collect the worker's whole heap, so a load or a write must not leave many JavaScript
   * objects (or engine terms waiting for a collection) alive; with a million rows' strings alive, a load
   * that took seconds took many minutes.
   */
  function loadText(target: Oxigraph.Store, text: string | Iterable<Buffer>, lenient?: boolean): boolean {
    if (typeof text === "string" && text.length === 0) return true;
    try {
      target.load(text, { format: "application/n-quads", lenient: lenient === true, no_transaction: true });
      return true;
    } catch {
      return false;
    }
  }

  function literalTerm(value: string, datatype?: string, language?: string, direction?: string): RdfTerm {
    const t: RdfTerm = { kind: "literal", value };
    if (language) t.language = direction ? language + "--" + direction : language;
    else if (datatype && datatype !== XSD_STRING && datatype !== RDF_LANG_STRING) t.datatype = datatype;
    return t;
  }

  function jsonTerm(b: JsonBinding): RdfTerm {
    switch (b.type) {
      case "uri":
        return { kind: "iri", value: b.value };
      case "bnode":
        return { kind: "blank", value: b.value };
      case "literal":
      case "typed-literal":
        return literalTerm(b.value, b.datatype, b["xml:lang"], b["its:dir"]);
      default:
        throw new Unrepresentable("a result holds an RDF " + b.type + " term, which a Term cannot carry");
    }
  }

  const SNAPSHOT_HEADER = "# acms graph snapshot 1 ";

  /** About how much N-Quads text goes to the loader at a time (the loader takes an iterable of chunks). */
  const CHUNK_BYTES = 1 << 20;

  /**
   * The snapshot file opened with its first chunk read, and the tag it was written at: "seq=<write
   * sequence number> rows=<stored rows>" (the row count also catches a table edited without the write
   * path), "" when the file is unreadable; undefined when there is none.
   */
  function openSnapshot(): SnapshotIn | undefined {
    let fd: number | undefined;
    try {
      fd = fs.openSync(workerData.snapshotPath, "r");
      const head = Buffer.allocUnsafe(CHUNK_BYTES);
      const n = fs.readSync(fd, head, 0, CHUNK_BYTES, null);
      const first = head.subarray(0, n);
      const text = first.subarray(0, Math.min(n, 4096)).toString("latin1");
      const end = text.indexOf("\n");
      const tag = text.startsWith(SNAPSHOT_HEADER) && end > 0 ? text.slice(SNAPSHOT_HEADER.length, end) : "";
      return { fd, first, tag };
    } catch {
      if (fd !== undefined) closeQuietly(fd);
      return undefined;
    }
  }

  function closeQuietly(fd: number): void {
    try {
      fs.closeSync(fd);
    } catch {
      // Already closed.
    }
  }

  /** The snapshot's text as chunks, read as the loader asks for them (a read error ends it: the load then fails). */
  function* snapshotChunks(snapshot: SnapshotIn): Generator<Buffer> {
    yield snapshot.first;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      const n = fs.readSync(snapshot.fd, chunk, 0, CHUNK_BYTES, null);
      if (n === 0) return;
      yield chunk.subarray(0, n);
    }
  }

  /**
   * A new snapshot, written to a temp file while the rows stream into the store (renamed over the old one
   * once the store loaded, so a reader sees a whole file or the old one); a failed write only loses the
   * snapshot, never the load.
   */
  function createSnapshot(tag: string): SnapshotOut | undefined {
    const tmp = workerData.snapshotPath + "." + process.pid + "." + threadId + ".tmp";
    try {
      const fd = fs.openSync(tmp, "w");
      const out: SnapshotOut = { tmp, fd, failed: false };
      appendSnapshot(out, Buffer.from(SNAPSHOT_HEADER + tag + "\n"));
      return out;
    } catch {
      return undefined;
    }
  }

  function appendSnapshot(out: SnapshotOut | undefined, chunk: Buffer): void {
    if (out === undefined || out.failed) return;
    try {
      fs.writeSync(out.fd, chunk);
    } catch {
      out.failed = true;
    }
  }

  function finishSnapshot(out: SnapshotOut | undefined, keep: boolean): void {
    if (out === undefined) return;
    closeQuietly(out.fd);
    try {
      if (keep && !out.failed) fs.renameSync(out.tmp, workerData.snapshotPath);
      else fs.rmSync(out.tmp, { force: true });
    } catch {
      try {
        fs.rmSync(out.tmp, { force: true });
      } catch {
        // Nothing to clean.
      }
    }
  }

  const ALL_ROWS = "SELECT graph, s_kind, s, p, o_kind, o, o_datatype, o_language FROM graph_triples";
  /** A row of ALL_ROWS: the graph, then the stored row. */
  type GraphRow = [string, ...WorkerRow];
  const rowOf = (r: GraphRow): WorkerRow => r.slice(1) as WorkerRow;

  /**
   * Every row without a blank node as N-Quads chunks, in one pass over the table (in graph order), each
   * chunk also appended to the new snapshot: no row outlives its chunk, so the worker's heap stays small.
   */
  function* rowChunks(db: BetterSqlite3.Database, out: SnapshotOut | undefined): Generator<Buffer> {
    let lines: string[] = [];
    let size = 0;
    let graph = "";
    let gText = "";
    for (const r of db
      .prepare(ALL_ROWS + " WHERE s_kind = 0 AND o_kind <> 1")
      .raw()
      .iterate() as IterableIterator<GraphRow>) {
      if (r[0] !== graph) {
        graph = r[0];
        gText = ntIri(graph);
      }
      const line = ntLine(r[2], r[3], r[4], r[5], r[6], r[7], gText);
      lines.push(line);
      size += line.length;
      if (size >= CHUNK_BYTES) {
        const chunk = Buffer.from(lines.join(""));
        lines = [];
        size = 0;
        appendSnapshot(out, chunk);
        yield chunk;
      }
    }
    if (lines.length > 0) {
      const chunk = Buffer.from(lines.join(""));
      appendSnapshot(out, chunk);
      yield chunk;
    }
  }

  /**
   * Streams chunks into the store; false when the loader refused them. The iterator is closed either way,
   * so a refused load leaves no SQLite statement running on the connection.
   */
  function loadChunks(store: Oxigraph.Store, chunks: Generator<Buffer>, lenient: boolean): boolean {
    try {
      return loadText(store, chunks, lenient);
    } finally {
      chunks.return(undefined);
    }
  }

  /**
   * Loads every triple as of one write sequence number, read in one SQLite read transaction: from the
   * snapshot when it was written at that number (plus the blank node rows, from SQLite), else from every
   * row, writing the snapshot for the workers that load next in the same pass.
   */
  function loadStore(db: BetterSqlite3.Database): { store: Oxigraph.Store; seq: number; source: "snapshot" | "sqlite" } {
    let store = new ox.Store();
    const restart = (): void => {
      (store as unknown as { free(): void }).free();
      store = new ox.Store();
    };
    let seq = 0;
    let source: "snapshot" | "sqlite" = "sqlite";
    let out: SnapshotOut | undefined;
    let loaded = false;
    const snapshot = openSnapshot();
    try {
      db.transaction(() => {
        const row = db.prepare("SELECT value FROM graph_meta WHERE key = 'seq'").get() as { value: string | number } | undefined;
        seq = row ? Number(row.value) : 0;
        const tag = "seq=" + seq + " rows=" + String(db.prepare("SELECT count(*) FROM graph_triples").pluck().get());
        const blankRows = db.prepare(ALL_ROWS + " WHERE s_kind = 1 OR o_kind = 1").raw();
        const addBlankRows = (): void => {
          for (const r of blankRows.iterate() as IterableIterator<GraphRow>) addQuad(store, r[0], rowOf(r));
        };
        if (snapshot !== undefined && snapshot.tag === tag) {
          if (loadChunks(store, snapshotChunks(snapshot), true)) {
            source = "snapshot";
            addBlankRows();
            return;
          }
          restart();
        }
        out = createSnapshot(tag);
        loaded = loadChunks(store, rowChunks(db, out), false);
        if (!loaded) {
          restart();
          const rows = db
            .prepare(ALL_ROWS + " WHERE s_kind = 0 AND o_kind <> 1")
            .raw()
            .iterate() as IterableIterator<GraphRow>;
          for (const r of rows) addQuad(store, r[0], rowOf(r));
        }
        addBlankRows();
      })();
    } finally {
      if (snapshot !== undefined) closeQuietly(snapshot.fd);
      finishSnapshot(out, loaded);
    }
    return { store, seq, source };
  }

  /** The worker's own read-only connection: the snapshot at start, then GetTriples and Traverse. */
  const db = new Database(workerData.dbPath, { readonly: true, fileMustExist: true });
  const loaded = loadStore(db);
  const store = loaded.store;
  let appliedSeq = loaded.seq;
  const bySubject = db.prepare("SELECT graph, p, o_kind, o, o_datatype, o_language FROM graph_triples WHERE s_kind = ? AND s = ?").raw();

  function clearGraph(graph: Oxigraph.NamedNode): void {
    for (const q of store.match(null, null, null, graph)) store.delete(q);
  }

  function applyWrite(m: WorkerWrite): void {
    if (m.seq <= appliedSeq) return;
    appliedSeq = m.seq;
    const g = graphNode(m.graph);
    if (m.type === "clear" || m.replace) clearGraph(g);
    if (m.type === "write") addRows(store, m.graph, m.rows);
  }

  function runQuery(m: Extract<WorkerRequest, { type: "query" }>): unknown {
    const json = m.form === "SELECT" || m.form === "ASK";
    const r = store.query(m.sparql, {
      default_graph: m.defaultGraphs.map(graphNode),
      named_graphs: m.namedGraphs.map(graphNode),
      results_format: json ? "application/sparql-results+json" : "application/n-triples",
    });
    if (typeof r === "boolean") return { form: "ASK", boolean: r, exhaustive: true };
    if (typeof r !== "string") throw new Error("unexpected query result of type " + typeof r);
    if (json) return solutionsFromJson(r, m.cap);
    return triplesFromNTriples(r, m.cap, m.form === "DESCRIBE" ? "DESCRIBE" : "CONSTRUCT");
  }

  /*
   * Answers are read from Oxigraph's serialisation, and only up to the cap: parsing a whole huge answer
   * into objects could exhaust the heap and abort the process, whereas one string is bounded by V8
   * (a longer one throws RangeError, answered RESOURCE_EXHAUSTED).
   */

  /** The end (exclusive) of the JSON object or array opening at i. */
  function jsonValueEnd(s: string, i: number): number {
    let depth = 0;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        for (i++; s.charCodeAt(i) !== 34; i++) if (s.charCodeAt(i) === 92) i++;
      } else if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    throw new Error("truncated query results");
  }

  function skipSpace(s: string, i: number): number {
    while (i < s.length && s.charCodeAt(i) <= 32) i++;
    return i;
  }

  /** SPARQL JSON results, {"head":{"vars":[..]},"results":{"bindings":[..]}} or {"head":{},"boolean":b}. */
  function solutionsFromJson(text: string, cap: number): unknown {
    const marker = text.indexOf(',"results":');
    if (marker < 0) {
      const json = JSON.parse(text) as { boolean?: unknown };
      if (typeof json.boolean !== "boolean") throw new Error("unexpected query results");
      return { form: "ASK", boolean: json.boolean, exhaustive: true };
    }
    const variables = (JSON.parse(text.slice(0, marker) + "}") as { head: { vars?: string[] } }).head.vars || [];
    let i = text.indexOf("[", marker) + 1;
    const rows: Array<Record<string, RdfTerm>> = [];
    let exhaustive = true;
    for (;;) {
      i = skipSpace(text, i);
      const c = text[i];
      if (c === "]" || c === undefined) break;
      if (c === ",") {
        i++;
        continue;
      }
      if (rows.length >= cap) {
        exhaustive = false;
        break;
      }
      const end = jsonValueEnd(text, i);
      const b = JSON.parse(text.slice(i, end)) as Record<string, JsonBinding>;
      const row: Record<string, RdfTerm> = {};
      for (const name of Object.keys(b)) row[name] = jsonTerm(b[name]);
      rows.push(row);
      i = end;
    }
    return { form: "SELECT", variables, rows, exhaustive };
  }

  const ECHAR: Record<string, string> = { t: "\t", b: "\b", n: "\n", r: "\r", f: "\f", '"': '"', "'": "'", "\\": "\\" };
  function unescapeNt(s: string): string {
    if (s.indexOf("\\") < 0) return s;
    return s.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))/g, (all: string, u4?: string, u8?: string, e?: string) =>
      u4 || u8 ? String.fromCodePoint(parseInt((u4 || u8)!, 16)) : e !== undefined && ECHAR[e] !== undefined ? ECHAR[e] : all,
    );
  }

  /** Reads the N-Triples term at i: [term, index after it]. */
  function ntTerm(s: string, i: number): [RdfTerm, number] {
    const c = s[i];
    if (c === "<") {
      if (s[i + 1] === "<") throw new Unrepresentable("a result holds an RDF triple term, which a Term cannot carry");
      const j = s.indexOf(">", i);
      return [{ kind: "iri", value: unescapeNt(s.slice(i + 1, j)) }, j + 1];
    }
    if (c === "_") {
      let j = i + 2;
      while (j < s.length && s.charCodeAt(j) > 32) j++;
      return [{ kind: "blank", value: s.slice(i + 2, j) }, j];
    }
    if (c === '"') {
      let j = i + 1;
      while (s[j] !== '"') j += s[j] === "\\" ? 2 : 1;
      const value = unescapeNt(s.slice(i + 1, j));
      j++;
      if (s[j] === "@") {
        let k = j + 1;
        while (k < s.length && s.charCodeAt(k) > 32) k++;
        return [literalTerm(value, undefined, s.slice(j + 1, k)), k];
      }
      if (s[j] === "^" && s[j + 1] === "^" && s[j + 2] === "<") {
        const k = s.indexOf(">", j + 3);
        return [literalTerm(value, unescapeNt(s.slice(j + 3, k))), k + 1];
      }
      return [literalTerm(value), j];
    }
    throw new Error("unexpected N-Triples term at offset " + i);
  }

  /** N-Triples as Oxigraph writes it: one "S P O ." per line. */
  function triplesFromNTriples(text: string, cap: number, form: "DESCRIBE" | "CONSTRUCT"): unknown {
    const triples: RdfTriple[] = [];
    let exhaustive = true;
    let i = 0;
    while (i < text.length) {
      i = skipSpace(text, i);
      if (i >= text.length) break;
      if (triples.length >= cap) {
        exhaustive = false;
        break;
      }
      const s = ntTerm(text, i);
      const p = ntTerm(text, skipSpace(text, s[1]));
      const o = ntTerm(text, skipSpace(text, p[1]));
      triples.push({ subject: s[0], predicate: p[0], object: o[0] });
      const eol = text.indexOf("\n", o[1]);
      i = eol < 0 ? text.length : eol + 1;
    }
    return { form, triples, exhaustive };
  }

  function rowTerm(kind: number, value: string, datatype?: string, language?: string): RdfTerm {
    if (kind === 0) return { kind: "iri", value };
    if (kind === 1) return { kind: "blank", value };
    const t: RdfTerm = { kind: "literal", value };
    if (language) t.language = language;
    else if (datatype) t.datatype = datatype;
    return t;
  }

  /** A row of `bySubject`: graph, predicate, object kind, object, datatype, language. */
  type SubjectRow = [string, string, number, string, string, string];

  /**
   * Breadth first from the start node over IRI and blank node objects, reading the stored rows (so terms
   * come back exactly as written, not in the engine's canonical form) of in-scope graphs only.
   */
  function traverse(m: Extract<WorkerRequest, { type: "traverse" }>): { triples: TraversedTriple[]; exhaustive: boolean } {
    const graphSet = new Set(m.graphs);
    const seen = new Set<string>();
    const triples: TraversedTriple[] = [];
    let exhaustive = true;
    const startKind = m.start.kind === "blank" ? 1 : 0;
    const visited = new Set([startKind + " " + m.start.value]);
    let frontier: Array<[number, string]> = [[startKind, m.start.value]];
    outer: for (let hop = 0; hop <= m.depth && frontier.length > 0; hop++) {
      const next: Array<[number, string]> = [];
      for (const node of frontier) {
        for (const r of bySubject.all(node[0], node[1]) as SubjectRow[]) {
          if (!graphSet.has(r[0])) continue;
          const key = node[0] + "\u0000" + node[1] + "\u0000" + r.slice(1).join("\u0000");
          if (!seen.has(key)) {
            if (triples.length >= m.cap) {
              exhaustive = false;
              break outer;
            }
            seen.add(key);
            triples.push({
              subject: rowTerm(node[0], node[1]),
              predicate: rowTerm(0, r[1]),
              object: rowTerm(r[2], r[3], r[4], r[5]),
              graph: r[0],
            });
          }
          if (hop < m.depth && r[2] !== 2) {
            const k = r[2] + " " + r[3];
            if (!visited.has(k)) {
              visited.add(k);
              next.push([r[2], r[3]]);
            }
          }
        }
      }
      frontier = next;
    }
    return { triples, exhaustive };
  }

  function describeError(e: unknown): WorkerError {
    if (e instanceof Unrepresentable) return { code: "unrepresentable", message: e.message };
    if (e instanceof RangeError) return { code: "too_large", message: e.message };
    if (e instanceof WebAssembly.RuntimeError || !(e instanceof Error)) {
      const message = (e as { message?: unknown } | null | undefined)?.message;
      return { code: "fatal", message: String(message ? message : e) };
    }
    if (/^error at [0-9]+:[0-9]+/.test(e.message)) return { code: "syntax", message: e.message };
    return { code: "query", message: e.message };
  }

  parentPort.on("message", (m: WorkerWrite | (WorkerRequest & { id: number })) => {
    if (m.type === "write" || m.type === "clear") {
      applyWrite(m);
      return;
    }
    let reply: WorkerReply;
    try {
      const result = m.type === "query" ? runQuery(m) : traverse(m);
      reply = { type: "result", id: m.id, result };
    } catch (e) {
      reply = { type: "error", id: m.id, error: describeError(e) };
    }
    parentPort.postMessage(reply);
  });

  const ready: WorkerReply = { type: "ready", seq: appliedSeq, size: store.size, source: loaded.source };
  parentPort.postMessage(ready);
}

/** The worker's program as source text (see workerSource). */
export function oxigraphWorkerSource(): string {
  return workerSource(runOxigraphWorker);
}
