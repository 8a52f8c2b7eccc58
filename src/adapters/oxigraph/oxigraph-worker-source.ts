/**
 * The source of the Oxigraph query worker, run with `new Worker(source, { eval: true, workerData })`.
 *
 * Why a worker: Oxigraph's JavaScript bindings evaluate a query synchronously, so a slow query run on the
 * main thread would block every other call. The worker owns an in-memory Oxigraph store; the main thread
 * can terminate it at a query's time limit (the only way to stop a running query) and start a fresh one.
 *
 * Why plain JavaScript in a string: the worker must start the same way under tsx, ts-jest and compiled
 * output, with no TypeScript loader and no path to its own file; its dependencies come as absolute
 * paths in `workerData` (`oxigraphPath`, `sqlitePath`), resolved by the main thread.
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
export const OXIGRAPH_WORKER_SOURCE = String.raw`
"use strict";
const fs = require("node:fs");
const { parentPort, threadId, workerData } = require("node:worker_threads");
const ox = require(workerData.oxigraphPath);
const Database = require(workerData.sqlitePath);

const XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";
const RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
class Unrepresentable extends Error {}

/*
 * Terms handed to Oxigraph as plain RDF/JS objects, which it converts (and checks) itself: an Oxigraph
 * term object holds engine memory until a garbage collection frees it (see loadText).
 */
function oxTerm(kind, value, datatype, language) {
  if (kind === 0) return { termType: "NamedNode", value: value };
  if (kind === 1) return { termType: "BlankNode", value: value };
  if (language) return { termType: "Literal", value: value, language: language, datatype: { termType: "NamedNode", value: RDF_LANG_STRING } };
  return { termType: "Literal", value: value, language: "", datatype: { termType: "NamedNode", value: datatype || XSD_STRING } };
}

function oxQuad(graph, r) {
  return { termType: "Quad", subject: oxTerm(r[0], r[1]), predicate: oxTerm(0, r[2]), object: oxTerm(r[3], r[4], r[5], r[6]), graph: { termType: "NamedNode", value: graph } };
}

/** Graph IRIs as Oxigraph terms, made once: scopes name the same graphs query after query. */
const graphNodes = new Map();
function graphNode(iri) {
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
const IRI_UNSAFE = /[\u0000-\u0020<>"{}|^\x60\\]/g;
const LITERAL_UNSAFE = /["\\\n\r]/g;
const LITERAL_ESCAPES = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r" };
const uchar = (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
function ntIri(v) {
  IRI_UNSAFE.lastIndex = 0;
  return "<" + (IRI_UNSAFE.test(v) ? v.replace(IRI_UNSAFE, uchar) : v) + ">";
}
function ntObject(kind, value, datatype, language) {
  if (kind === 0) return ntIri(value);
  LITERAL_UNSAFE.lastIndex = 0;
  const text = '"' + (LITERAL_UNSAFE.test(value) ? value.replace(LITERAL_UNSAFE, (c) => LITERAL_ESCAPES[c]) : value) + '"';
  if (language) return text + "@" + language;
  return datatype ? text + "^^" + ntIri(datatype) : text;
}
/** One N-Quads line of a triple without blank nodes, in graph g (already written as <iri>). */
function ntLine(s, p, oKind, o, datatype, language, g) {
  return ntIri(s) + " " + ntIri(p) + " " + ntObject(oKind, o, datatype, language) + " " + g + " .\n";
}

/*
 * Adds the rows of one graph. Oxigraph's N-Quads loader is several times faster than adding terms one
 * at a time, but it renames blank nodes, which would change how blank nodes of separate writes join; so
 * it serves only rows without blank nodes. Text the loader refuses (its parse is stricter than term
 * construction) is added term by term, as are rows with blank nodes: adding a quad twice keeps one, so
 * whatever part of the text was loaded before the refusal changes nothing.
 */
function addRows(target, graph, rows) {
  const text = [];
  const blank = [];
  const gText = ntIri(graph);
  for (const r of rows) {
    if (isBlankRow(r)) blank.push(r);
    else text.push(ntLine(r[1], r[2], r[3], r[4], r[5], r[6], gText));
  }
  if (!loadText(target, text.join(""))) for (const r of rows) if (!isBlankRow(r)) addQuad(target, graph, r);
  for (const r of blank) addQuad(target, graph, r);
}

/** Adds one stored row term by term. */
function addQuad(target, graph, r) {
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
function loadText(target, text, lenient) {
  if (text.length === 0) return true;
  try {
    target.load(text, { format: "application/n-quads", lenient: lenient === true, no_transaction: true });
    return true;
  } catch (e) {
    return false;
  }
}

const isBlankRow = (r) => r[0] === 1 || r[3] === 1;

function literalTerm(value, datatype, language, direction) {
  const t = { kind: "literal", value: value };
  if (language) t.language = direction ? language + "--" + direction : language;
  else if (datatype && datatype !== XSD_STRING && datatype !== RDF_LANG_STRING) t.datatype = datatype;
  return t;
}

function jsonTerm(b) {
  switch (b.type) {
    case "uri": return { kind: "iri", value: b.value };
    case "bnode": return { kind: "blank", value: b.value };
    case "literal":
    case "typed-literal": return literalTerm(b.value, b.datatype, b["xml:lang"], b["its:dir"]);
    default: throw new Unrepresentable("a result holds an RDF " + b.type + " term, which a Term cannot carry");
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
function openSnapshot() {
  let fd;
  try {
    fd = fs.openSync(workerData.snapshotPath, "r");
    const head = Buffer.allocUnsafe(CHUNK_BYTES);
    const n = fs.readSync(fd, head, 0, CHUNK_BYTES, null);
    const first = head.subarray(0, n);
    const text = first.subarray(0, Math.min(n, 4096)).toString("latin1");
    const end = text.indexOf("\n");
    const tag = text.startsWith(SNAPSHOT_HEADER) && end > 0 ? text.slice(SNAPSHOT_HEADER.length, end) : "";
    return { fd: fd, first: first, tag: tag };
  } catch (e) {
    if (fd !== undefined) closeQuietly(fd);
    return undefined;
  }
}

function closeQuietly(fd) {
  try { fs.closeSync(fd); } catch (e) { /* already closed */ }
}

/** The snapshot's text as chunks, read as the loader asks for them (a read error ends it: the load then fails). */
function* snapshotChunks(snapshot) {
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
function createSnapshot(tag) {
  const tmp = workerData.snapshotPath + "." + process.pid + "." + threadId + ".tmp";
  try {
    const fd = fs.openSync(tmp, "w");
    const out = { tmp: tmp, fd: fd, failed: false };
    appendSnapshot(out, Buffer.from(SNAPSHOT_HEADER + tag + "\n"));
    return out;
  } catch (e) {
    return undefined;
  }
}

function appendSnapshot(out, chunk) {
  if (out === undefined || out.failed) return;
  try {
    fs.writeSync(out.fd, chunk);
  } catch (e) {
    out.failed = true;
  }
}

function finishSnapshot(out, keep) {
  if (out === undefined) return;
  closeQuietly(out.fd);
  try {
    if (keep && !out.failed) fs.renameSync(out.tmp, workerData.snapshotPath);
    else fs.rmSync(out.tmp, { force: true });
  } catch (e) {
    try { fs.rmSync(out.tmp, { force: true }); } catch (e2) { /* nothing to clean */ }
  }
}

const ALL_ROWS = "SELECT graph, s_kind, s, p, o_kind, o, o_datatype, o_language FROM graph_triples";

/**
 * Every row without a blank node as N-Quads chunks, in one pass over the table (in graph order), each
 * chunk also appended to the new snapshot: no row outlives its chunk, so the worker's heap stays small.
 */
function* rowChunks(db, out) {
  let lines = [];
  let size = 0;
  let graph = "";
  let gText = "";
  for (const r of db.prepare(ALL_ROWS + " WHERE s_kind = 0 AND o_kind <> 1").raw().iterate()) {
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
function loadChunks(store, chunks, lenient) {
  try {
    return loadText(store, chunks, lenient);
  } finally {
    chunks.return();
  }
}

/**
 * Loads every triple as of one write sequence number, read in one SQLite read transaction: from the
 * snapshot when it was written at that number (plus the blank node rows, from SQLite), else from every
 * row, writing the snapshot for the workers that load next in the same pass.
 */
function load(db) {
  let store = new ox.Store();
  const restart = () => {
    store.free();
    store = new ox.Store();
  };
  let seq = 0;
  let source = "sqlite";
  let out;
  let loaded = false;
  const snapshot = openSnapshot();
  try {
    db.transaction(() => {
      const row = db.prepare("SELECT value FROM graph_meta WHERE key = 'seq'").get();
      seq = row ? Number(row.value) : 0;
      const tag = "seq=" + seq + " rows=" + db.prepare("SELECT count(*) FROM graph_triples").pluck().get();
      const blankRows = db.prepare(ALL_ROWS + " WHERE s_kind = 1 OR o_kind = 1").raw();
      const addBlankRows = () => {
        for (const r of blankRows.iterate()) addQuad(store, r[0], r.slice(1));
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
        for (const r of db.prepare(ALL_ROWS + " WHERE s_kind = 0 AND o_kind <> 1").raw().iterate()) addQuad(store, r[0], r.slice(1));
      }
      addBlankRows();
    })();
  } finally {
    if (snapshot !== undefined) closeQuietly(snapshot.fd);
    finishSnapshot(out, loaded);
  }
  return { store: store, seq: seq, source: source };
}

/** The worker's own read-only connection: the snapshot at start, then GetTriples and Traverse. */
const db = new Database(workerData.dbPath, { readonly: true, fileMustExist: true });
const loaded = load(db);
const store = loaded.store;
let appliedSeq = loaded.seq;
const bySubject = db.prepare("SELECT graph, p, o_kind, o, o_datatype, o_language FROM graph_triples WHERE s_kind = ? AND s = ?").raw();

function clearGraph(graph) {
  for (const q of store.match(null, null, null, graph)) store.delete(q);
}

function applyWrite(m) {
  if (m.seq <= appliedSeq) return;
  appliedSeq = m.seq;
  const g = graphNode(m.graph);
  if (m.type === "clear" || m.replace) clearGraph(g);
  if (m.type === "write") addRows(store, m.graph, m.rows);
}


function runQuery(m) {
  const options = { default_graph: m.defaultGraphs.map(graphNode), named_graphs: m.namedGraphs.map(graphNode) };
  options.results_format = m.form === "SELECT" || m.form === "ASK" ? "application/sparql-results+json" : "application/n-triples";
  const r = store.query(m.sparql, options);
  if (typeof r === "boolean") return { form: "ASK", boolean: r, exhaustive: true };
  if (typeof r !== "string") throw new Error("unexpected query result of type " + typeof r);
  if (m.form === "SELECT" || m.form === "ASK") return solutionsFromJson(r, m.cap);
  return triplesFromNTriples(r, m.cap, m.form === "DESCRIBE" ? "DESCRIBE" : "CONSTRUCT");
}

/*
 * Answers are read from Oxigraph's serialisation, and only up to the cap: parsing a whole huge answer
 * into objects could exhaust the heap and abort the process, whereas one string is bounded by V8
 * (a longer one throws RangeError, answered RESOURCE_EXHAUSTED).
 */

/** The end (exclusive) of the JSON object or array opening at i. */
function jsonValueEnd(s, i) {
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

function skipSpace(s, i) {
  while (i < s.length && s.charCodeAt(i) <= 32) i++;
  return i;
}

/** SPARQL JSON results, {"head":{"vars":[..]},"results":{"bindings":[..]}} or {"head":{},"boolean":b}. */
function solutionsFromJson(text, cap) {
  const marker = text.indexOf(',"results":');
  if (marker < 0) {
    const json = JSON.parse(text);
    if (typeof json.boolean !== "boolean") throw new Error("unexpected query results");
    return { form: "ASK", boolean: json.boolean, exhaustive: true };
  }
  const variables = JSON.parse(text.slice(0, marker) + "}").head.vars || [];
  let i = text.indexOf("[", marker) + 1;
  const rows = [];
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
    const b = JSON.parse(text.slice(i, end));
    const row = {};
    for (const name of Object.keys(b)) row[name] = jsonTerm(b[name]);
    rows.push(row);
    i = end;
  }
  return { form: "SELECT", variables: variables, rows: rows, exhaustive: exhaustive };
}

const ECHAR = { t: "\t", b: "\b", n: "\n", r: "\r", f: "\f", '"': '"', "'": "'", "\\": "\\" };
function unescapeNt(s) {
  if (s.indexOf("\\") < 0) return s;
  return s.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))/g, (all, u4, u8, e) =>
    u4 || u8 ? String.fromCodePoint(parseInt(u4 || u8, 16)) : ECHAR[e] !== undefined ? ECHAR[e] : all,
  );
}

/** Reads the N-Triples term at i: [term, index after it]. */
function ntTerm(s, i) {
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
function triplesFromNTriples(text, cap, form) {
  const triples = [];
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
  return { form: form, triples: triples, exhaustive: exhaustive };
}

function rowTerm(kind, value, datatype, language) {
  if (kind === 0) return { kind: "iri", value: value };
  if (kind === 1) return { kind: "blank", value: value };
  const t = { kind: "literal", value: value };
  if (language) t.language = language;
  else if (datatype) t.datatype = datatype;
  return t;
}

/**
 * Breadth first from the start node over IRI and blank node objects, reading the stored rows (so terms
 * come back exactly as written, not in the engine's canonical form) of in-scope graphs only.
 */
function traverse(m) {
  const graphSet = new Set(m.graphs);
  const seen = new Set();
  const triples = [];
  let exhaustive = true;
  const startKind = m.start.kind === "blank" ? 1 : 0;
  const visited = new Set([startKind + " " + m.start.value]);
  let frontier = [[startKind, m.start.value]];
  outer: for (let hop = 0; hop <= m.depth && frontier.length > 0; hop++) {
    const next = [];
    for (const node of frontier) {
      for (const r of bySubject.all(node[0], node[1])) {
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
  return { triples: triples, exhaustive: exhaustive };
}

function describeError(e) {
  if (e instanceof Unrepresentable) return { code: "unrepresentable", message: e.message };
  if (e instanceof RangeError) return { code: "too_large", message: e.message };
  if (e instanceof WebAssembly.RuntimeError || !(e instanceof Error)) return { code: "fatal", message: String(e && e.message ? e.message : e) };
  if (/^error at [0-9]+:[0-9]+/.test(e.message)) return { code: "syntax", message: e.message };
  return { code: "query", message: e.message };
}

parentPort.on("message", (m) => {
  if (m.type === "write" || m.type === "clear") {
    applyWrite(m);
    return;
  }
  let reply;
  try {
    const result = m.type === "query" ? runQuery(m) : traverse(m);
    reply = { type: "result", id: m.id, result: result };
  } catch (e) {
    reply = { type: "error", id: m.id, error: describeError(e) };
  }
  parentPort.postMessage(reply);
});

parentPort.postMessage({ type: "ready", seq: appliedSeq, size: store.size, source: loaded.source });
`;
