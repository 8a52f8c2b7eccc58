import { mkdirSync } from "node:fs";
import { Indexer } from "../../application/indexing/indexer.js";
import { fetchContent } from "../../application/rag/fetch-content.js";
import { hybridSearch } from "../../application/rag/hybrid-search.js";
import { GraphQueries } from "../../application/graph/graph-queries.js";
import { ResourceRegistry } from "../../application/registry/resource-registry.js";
import { ResourceEraser } from "../../application/registry/resource-eraser.js";
import { ScopeResolver } from "../../application/scopes/scope-resolver.js";
import type { Services } from "../../application/services.js";
import { searchText } from "../../application/search/text-search.js";
import { TierService } from "../../application/tiers/tier-service.js";
import { searchVectors } from "../../application/search/vector-search.js";
import { UnavailableError, UnimplementedError } from "../../domain/errors.js";
import type { TextBackend } from "../../ports/text-backend.js";
import { openDuckDb } from "../../adapters/duckdb/index.js";
import { openOxigraph } from "../../adapters/oxigraph/index.js";
import { openPostgres } from "../../adapters/postgres/index.js";
import {
  ChunkWorkers,
  loadVectors,
  MemoryBm25TextBackend,
  PartitionedVectorBackend,
  type ChunkTextSource,
} from "../../adapters/kit/index.js";
import { openSparqlEndpoint } from "../../adapters/sparql-endpoint/index.js";
import { openSqlite, openSqliteCatalog, type SqliteCatalog } from "../../adapters/sqlite/index.js";
import type { GraphBackend } from "../../ports/graph-backend.js";
import type { Backends } from "./backends.js";
import { CloseStack } from "./close-stack.js";
import type { Config } from "./config.js";
import { lockDataDir } from "./data-dir-lock.js";
import { openEmbedder } from "./open-embedder.js";
import { QueryEmbedder } from "../../application/search/query-embedder.js";

// The composition root: the one place that picks adapters (from config) and builds the application
// services over them. External engines plug in here, chosen by config.

/** How `createBackends` opens the adapters. */
export interface CreateBackendsOptions {
  /**
   * Hold the background loads (the embedded vectors' read, the graph store's first worker, the DuckDB
   * keyword index's build) until `Backends.startLoads` is called: `startServer` calls it once listening,
   * so the time to listening and the memory then do not grow with the data held. Searches wait, and vector
   * writes queue (keyword index changes are held) from the start all the same. Default false: the loads
   * start at once (tools and tests that use the backends bare).
   */
  deferLoads?: boolean;
}

/**
 * A gate the deferred loads wait on: open at once unless `deferred`. `cancel` (backends closed before it
 * opened) fails the waiting load instead, so nothing waits on it forever; after `open` it does nothing.
 */
function loadGate(deferred: boolean): { opened: Promise<void>; open(): void; cancel(): void } {
  if (!deferred) return { opened: Promise.resolve(), open: () => undefined, cancel: () => undefined };
  let open!: () => void;
  let cancel!: () => void;
  const opened = new Promise<void>((resolve, reject) => {
    open = resolve;
    cancel = () => reject(new UnavailableError("the backends were closed before loading"));
  });
  opened.catch(() => undefined);
  return { opened, open, cancel };
}

/** `entries` read only once `gate` has opened (so the state read is no older than that). */
async function* readAfter<T>(gate: Promise<void>, entries: () => AsyncIterable<T>): AsyncIterable<T> {
  await gate;
  yield* entries();
}

/**
 * Opens the adapters config asks for under a locked data directory: the embedded default (SQLite,
 * in-process vectors, Oxigraph) for now, with the keyword index chosen by `config.keywordIndex`. When a
 * step fails, everything opened before it is closed again (the lock last) before the error is thrown.
 */
export async function createBackends(config: Config, opts: CreateBackendsOptions = {}): Promise<Backends> {
  mkdirSync(config.dataDir, { recursive: true });
  const opened = new CloseStack();
  opened.push(lockDataDir(config.dataDir), (lock) => lock.release());
  const deferLoads = opts.deferLoads ?? false;
  try {
    // First, so a model of the wrong dimension stops the start before any store is opened.
    const embedder = await openEmbedder(config);
    if (embedder) opened.push(embedder.embedder, (e) => e.close());
    let backends: Backends;
    if (config.postgresUrl !== undefined) backends = await openOnPostgres(config, config.postgresUrl, opened, deferLoads);
    else if (config.duckdbPath !== undefined) backends = await openOnDuckDb(config, config.duckdbPath, opened, deferLoads);
    else backends = await openEmbedded(config, opened, deferLoads);
    // Closed before the stores (the stack closes in reverse): an upload still chunking fails, then the stores close.
    return { ...backends, ...(embedder ?? {}), chunker: openChunker(opened) };
  } catch (err) {
    // The failed step's error is the one to report: a close failing behind it would only hide it.
    await opened.closeAll().catch(() => undefined);
    throw err;
  }
}

/**
 * The chunking threads, or none (documents are then chunked on the serving thread, as before them) when the
 * tokenizer package cannot be found for a thread to load; said in one line.
 */
function openChunker(opened: CloseStack): ChunkWorkers | undefined {
  try {
    return opened.push(new ChunkWorkers(), (c) => c.close());
  } catch (err) {
    process.stderr.write(`acms: chunking on the serving thread: ${err instanceof Error ? err.message : String(err)}\n`);
    return undefined;
  }
}

/**
 * The keyword search backend: the store's native index (FTS5, PostgreSQL) when the adapter declares one
 * (`hasNativeKeywordSearch`) and config does not ask for the in-memory index, else the in-memory BM25
 * fallback built from the stored chunk texts (same tokenizer, BM25 and order as FTS5).
 */
function chooseTextBackend(native: TextBackend | undefined, source: ChunkTextSource, choice: Config["keywordIndex"]): TextBackend {
  if (native && native.hasNativeKeywordSearch && choice === "native") return native;
  return new MemoryBm25TextBackend(source);
}

/** The tier service over the catalogue's store, pushed onto `opened` (it closes the store). */
async function openTiers(config: Config, catalog: SqliteCatalog, opened: CloseStack): Promise<TierService> {
  return opened.push(
    await TierService.open(catalog.tierStore, {
      budgets: config.tiers,
      summaryTokens: config.tiers.summaryTokens,
      registry: catalog.registry,
    }),
    (t) => t.close(),
  );
}

/** Where the embedded engine and the catalogue beside DuckDB keep their SQLite file and cold fragments. */
function sqliteConfig(config: Config): { path: string; coldDir: string } {
  return { path: `${config.dataDir}/acms.db`, coldDir: `${config.dataDir}/cold` };
}

async function openEmbedded(config: Config, opened: CloseStack, deferLoads: boolean): Promise<Backends> {
  const sqlite = opened.push(openSqlite(sqliteConfig(config)), (e) => e.close());
  const tiers = await openTiers(config, sqlite, opened);
  const { registry, scopes, documents, units } = sqlite;
  // Never FTS5 with the whole table's statistics: without its extension, the in-memory index (per-scope too).
  if (sqlite.text === undefined && config.keywordIndex === "native") {
    process.stderr.write(`acms: keyword search uses the in-memory BM25 index: ${sqlite.textUnavailable}\n`);
  }
  const text = chooseTextBackend(
    sqlite.text,
    { generation: () => documents.generation(), snapshotChunks: () => units.snapshotChunks() },
    config.keywordIndex,
  );
  const vector = opened.push(new PartitionedVectorBackend({ dimension: config.embeddingDim, graphDir: `${config.dataDir}/vectors` }), (v) =>
    v.close(),
  );
  // Loads in the background (health says NOT_SERVING for vectors meanwhile): start-up does not wait for
  // the vectors held. Writes from here on are queued and replayed after the rows read, which start once
  // the gate opens (deferLoads: once the server listens).
  const gate = opened.push(loadGate(deferLoads), (g) => g.cancel());
  const vectorReady = loadVectors(
    vector,
    readAfter(gate.opened, () => documents.iterateVectors()),
  );
  // Whoever starts a server watches it (health); a bare set of backends (tools, tests) may close first.
  vectorReady.catch(() => undefined);
  const { graph, graphEngine, graphReady, beginLoading } = await openGraph(config, deferLoads, opened);
  return {
    startLoads() {
      gate.open();
      beginLoading?.();
    },
    registry,
    scopes,
    tiers,
    documents,
    text,
    vector,
    vectorReady,
    graph,
    graphEngine,
    graphReady,
    units,
    close: () => opened.closeAll(),
  };
}

/**
 * The graph: on the SPARQL endpoint when ACMS_SPARQL_QUERY_URL is set, else the embedded Oxigraph (loading
 * in the background; with `deferLoad`, from `beginLoading` on). Pushed onto `opened`.
 */
async function openGraph(
  config: Config,
  deferLoad: boolean,
  opened: CloseStack,
): Promise<{ graph: GraphBackend; graphEngine: string; graphReady?: Promise<void>; beginLoading?: () => void }> {
  if (config.sparqlEndpoint) {
    // The endpoint's queries are shared between callers as the embedded workers are (same wait bound and slice).
    const { graph, description } = await openSparqlEndpoint({
      ...config.sparqlEndpoint,
      queueTimeoutMs: config.graph.queueTimeoutMs,
      sliceMs: config.graph.sliceMs,
    });
    return { graph: opened.push(graph, (g) => g.close()), graphEngine: description };
  }
  const path = `${config.dataDir}/graph.db`;
  const graph = opened.push(openOxigraph({ path, ...config.graph, deferLoad }), (g) => g.close());
  const graphReady = graph.whenReady();
  // Whoever starts a server watches it (health); a bare set of backends (tools, tests) may close first.
  graphReady.catch(() => undefined);
  return { graph, graphEngine: `Oxigraph (embedded, ${path})`, graphReady, beginLoading: () => graph.beginLoading() };
}

/** ACMS_POSTGRES_URL: every PostgreSQL adapter (openPostgres); the graph and cold files stay under the data directory. */
async function openOnPostgres(config: Config, postgresUrl: string, opened: CloseStack, deferLoads: boolean): Promise<Backends> {
  const pg = opened.push(await openPostgres({ postgresUrl, embeddingDim: config.embeddingDim, dataDir: config.dataDir }), (p) => p.close());
  const tiers = opened.push(
    await TierService.open(pg.tierStore, { budgets: config.tiers, summaryTokens: config.tiers.summaryTokens, registry: pg.registry }),
    (t) => t.close(),
  );
  const { documents, units } = pg;
  const text = chooseTextBackend(
    pg.text,
    { generation: () => documents.generation(), snapshotChunks: () => units.snapshotChunks() },
    config.keywordIndex,
  );
  const { graph, graphEngine, graphReady, beginLoading } = await openGraph(config, deferLoads, opened);
  return {
    startLoads: beginLoading,
    registry: pg.registry,
    scopes: pg.scopes,
    tiers,
    documents,
    text,
    vector: pg.vector,
    graph,
    graphEngine,
    graphReady,
    units,
    close: () => opened.closeAll(),
  };
}

/**
 * ACMS_DUCKDB_PATH: documents, chunks and vectors in the DuckDB file (vector search in SQL), keyword
 * search on the in-memory BM25 loaded from it in the background and kept current from its commits; registry,
 * scopes and the tier catalogue stay in SQLite under the data directory, the graph where config says.
 */
async function openOnDuckDb(config: Config, duckdbPath: string, opened: CloseStack, deferLoads: boolean): Promise<Backends> {
  const catalog = opened.push(openSqliteCatalog(sqliteConfig(config)), (c) => c.close());
  const text = new MemoryBm25TextBackend(
    { generation: () => documents.generation(), snapshotChunks: () => units.snapshotChunks() },
    { incremental: true },
  );
  const duck = opened.push(
    await openDuckDb({ path: duckdbPath, dimension: config.embeddingDim, onChunkTexts: (changes) => text.apply(changes) }),
    (d) => d.close(),
  );
  const { registry, scopes } = catalog;
  const tiers = await openTiers(config, catalog, opened);
  const { documents, units } = duck;
  // Built in the background (health says NOT_SERVING for keyword search meanwhile; a search that comes
  // anyway waits for the build), so start-up does not wait for the chunks held. Commits from here on are
  // held by the index and applied after the snapshot, which is read once the gate opens (deferLoads:
  // once the server listens); those the snapshot already holds are skipped by generation.
  const gate = loadGate(deferLoads);
  const startBuild = gate.opened.then(() => text.load());
  // A failed start-up build is not final (each keyword search tries again): readiness follows the first
  // build that succeeds, so health turns SERVING with it. It fails only when the backends close before the
  // start-up build began.
  const textReady = gate.opened.then(() =>
    startBuild.catch((err: unknown) => {
      process.stderr.write(
        `acms: the keyword index could not be built at start (each keyword search tries again): ${err instanceof Error ? err.message : String(err)}\n`,
      );
      return text.whenBuilt();
    }),
  );
  // Whoever starts a server watches it (health); a bare set of backends (tools, tests) may close first.
  textReady.catch(() => undefined);
  // At close the gate is cancelled first (a build not yet started fails), then a running one is let finish
  // before DuckDB closes under its read.
  opened.push(startBuild, (build) => build.catch(() => undefined));
  opened.push(gate, (g) => g.cancel());
  const vector = duck.vector;
  const { graph, graphEngine, graphReady, beginLoading } = await openGraph(config, deferLoads, opened);
  return {
    startLoads() {
      gate.open();
      beginLoading?.();
    },
    registry,
    scopes,
    tiers,
    documents,
    text,
    textReady,
    vector,
    graph,
    graphEngine,
    graphReady,
    units,
    close: () => opened.closeAll(),
  };
}

/**
 * Builds every application service over `backends` with the limits of `config`: one bundle per server
 * (the indexer's write section is per bundle). An absent optional backend makes the services that need
 * it answer UNIMPLEMENTED.
 */
export function createServices(config: Config, backends: Backends): Services {
  const { documents, registry, scopes, text, vector, graph, units } = backends;
  const limits = { maxResultsCap: config.maxResultsCap, recentWindowMs: config.recentWindowMs };
  const embedder = backends.embedder;
  const queryEmbedder = embedder && new QueryEmbedder(embedder);
  const indexer = new Indexer({
    documents,
    registry,
    vector,
    graph,
    embeddingDim: config.embeddingDim,
    embedder,
    chunker: backends.chunker,
  });
  const textDeps = { ...limits, text, documents };
  const vectorDeps = { ...limits, vector, documents, embeddingDim: config.embeddingDim, queryEmbedder };
  const hybridDeps = {
    ...limits,
    documents,
    text,
    vector,
    graph,
    units,
    embeddingDim: config.embeddingDim,
    sparqlTimeoutMs: config.sparqlTimeoutMs,
    queryEmbedder,
  };
  const fetchDeps = units && {
    units,
    maxUris: config.maxResultsCap,
    maxAnswerBytes: config.maxMessageBytes,
    recentWindowMs: config.recentWindowMs,
  };
  return {
    registry: new ResourceRegistry(registry),
    scopes: new ScopeResolver(registry, scopes, config.storedScopeCaps),
    graph: new GraphQueries({ graph, sparqlTimeoutMs: config.sparqlTimeoutMs, indexGeneration: () => documents.generation() }),
    indexer,
    searchText: (view, req, signal) => searchText(textDeps, view, req, signal),
    searchVectors: (view, req, signal) => searchVectors(vectorDeps, view, req, signal),
    hybridSearch: (view, req, signal, tenant) => hybridSearch(hybridDeps, view, req, signal, tenant),
    async fetchContent(view, uris) {
      if (!fetchDeps) throw new UnimplementedError("no document reader is configured on this server");
      return fetchContent(fetchDeps, view, uris);
    },
    tiers: backends.tiers,
    indexGeneration: () => documents.generation(),
    eraser: new ResourceEraser({
      registry,
      indexer,
      documents,
      graph,
      tiers: backends.tiers,
      log: (message) => process.stderr.write(`${message}\n`),
    }),
  };
}
