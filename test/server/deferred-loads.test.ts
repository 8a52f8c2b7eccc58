/**
 * A server's background loads (the vectors' read from the document store, the graph store's first query
 * worker) wait until it listens: `createBackends({ deferLoads: true })` reads no data until `startLoads`,
 * which `startServer` calls once listening, so neither the time to listening nor the memory then grows with
 * the data held. Closing before the loads started fails their readiness instead of leaving it pending. On
 * DuckDB the keyword index (the in-memory BM25 over the file's chunks) is one of these loads, and commits
 * made before or while it builds are in it once built.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import type { MemoryBm25TextBackend } from "../../src/adapters/kit/bm25/memory-bm25-text-backend.js";
import type { OxigraphGraphBackend } from "../../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { UnavailableError } from "../../src/domain/errors.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { KeyRing } from "../../src/application/access/key-ring.js";
import { startServer } from "../../src/server/composition/server.js";
import { quietLog } from "../support/quiet-log.js";
import { testView } from "../text/text-corpus.js";

const R = "01JD0C00000000000000000003";
let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "acms-deferred-loads-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

// One graph worker (and its spare): the test is about when they start, not how many.
const config = () => loadConfig({ ACMS_HOST: "127.0.0.1", ACMS_PORT: "0", ACMS_DATA_DIR: dataDir, ACMS_GRAPH_WORKERS: "1" });
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("deferred background loads", () => {
  it("read nothing until startLoads, then load the state committed by then", async () => {
    const backends = await createBackends(config(), { deferLoads: true });
    try {
      const read = jest.spyOn(backends.documents, "iterateVectors");
      const graph = backends.graph as OxigraphGraphBackend;
      await turns(5);
      expect(read).not.toHaveBeenCalled();
      expect(graph.loads).toEqual({ snapshot: 0, sqlite: 0 });
      // Committed before the loads start (the store alone: no vector write reaches the backend).
      await backends.documents.upsertDocuments(
        R,
        [
          {
            path: "a.md",
            content: "a",
            metadata: {},
            chunks: [{ text: "a", embedding: Float32Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0)) }],
          },
        ],
        Date.now(),
      );
      backends.startLoads!();
      backends.startLoads!();
      await backends.vectorReady;
      await backends.graphReady;
      expect(read).toHaveBeenCalledTimes(1);
      expect(graph.loads.snapshot + graph.loads.sqlite).toBeGreaterThanOrEqual(1);
      const query = Float32Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0));
      const { hits } = await backends.vector!.search(testView([R]), query, {
        topK: 1,
        minScore: 0,
        now: Date.now(),
        recentWindowMs: 60_000,
      });
      expect(hits.map((h) => h.path)).toEqual(["a.md"]);
    } finally {
      await backends.close();
    }
  });

  it("are started by startServer once it listens, health turning SERVING as each is loaded", async () => {
    const backends = await createBackends(config(), { deferLoads: true });
    const server = await startServer({ config: config(), keys: new KeyRing([]), backends, log: quietLog() });
    const sessions = new Http2SessionManager(server.url);
    try {
      await backends.vectorReady;
      await backends.graphReady;
      const health = createClient(Health, createGrpcTransport({ baseUrl: server.url, sessionManager: sessions }));
      expect((await health.check({ service: "acms.v1.VectorBackendService" })).status).toBe(ServingStatus.SERVING);
      expect((await health.check({ service: "acms.v1.GraphBackendService" })).status).toBe(ServingStatus.SERVING);
    } finally {
      sessions.abort();
      await server.close(0);
    }
  });

  it("fail their readiness when the backends close before they started", async () => {
    const backends = await createBackends(config(), { deferLoads: true });
    const vectorReady = backends.vectorReady!;
    const graphReady = backends.graphReady!;
    await backends.close();
    await expect(vectorReady).rejects.toBeInstanceOf(UnavailableError);
    await expect(graphReady).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe("deferred keyword index on DuckDB", () => {
  const duckConfig = () =>
    loadConfig({
      ACMS_HOST: "127.0.0.1",
      ACMS_PORT: "0",
      ACMS_DATA_DIR: dataDir,
      ACMS_GRAPH_WORKERS: "1",
      ACMS_DUCKDB_PATH: join(dataDir, "docs.duckdb"),
    });
  const doc = (path: string, text: string) => ({ path, content: text, metadata: {}, chunks: [{ text }] });
  const paths = async (backends: Awaited<ReturnType<typeof createBackends>>, query: string) =>
    (await backends.text.search(testView([R]), query, { maxResults: 50, now: Date.now(), recentWindowMs: 60_000 })).hits
      .map((h) => h.path)
      .sort();

  it("is built from the file only after startLoads; writes made before and while it builds are in it", async () => {
    // Held in the file before this start: long enough chunks that the build spans many turns.
    const filler = Array.from({ length: 80 }, (_, i) => `lorem${i % 37} ipsum${i % 11} dolor`).join(" ");
    const seeding = await createBackends(duckConfig());
    for (let d = 0; d < 5; d++) {
      await seeding.documents.upsertDocuments(
        R,
        Array.from({ length: 200 }, (_, i) => doc(`held/${d}-${i}.md`, `held${d}x${i} ${filler}`)),
        Date.now(),
      );
    }
    await seeding.close();

    const backends = await createBackends(duckConfig(), { deferLoads: true });
    try {
      const text = backends.text as MemoryBm25TextBackend;
      // The build goes on from its snapshot only once a write has landed after it, so the index must take in
      // a write its snapshot missed, whatever the machine's speed (timed alone, a loaded machine's first
      // write could land after the build).
      let wrote: () => void = () => undefined;
      const aWriteLanded = new Promise<void>((resolve) => (wrote = resolve));
      let snapshotTaken = false;
      const units = backends.units!;
      const original = units.snapshotChunks.bind(units);
      const snapshot = jest.spyOn(units, "snapshotChunks").mockImplementation(async () => {
        const taken = await original();
        snapshotTaken = true;
        await aWriteLanded;
        return taken;
      });
      await turns(5);
      expect(snapshot).not.toHaveBeenCalled();
      expect(text.indexedGeneration).toBeUndefined();
      await backends.documents.upsertDocuments(R, [doc("before.md", "zebra before")], Date.now());
      let loaded = false;
      const textReady = backends.textReady!.then(() => (loaded = true));
      backends.startLoads!();
      backends.startLoads!();
      const during: string[] = [];
      let whileBuilding = 0;
      for (let i = 0; !loaded; i++) {
        await backends.documents.upsertDocuments(R, [doc(`during-${i}.md`, `zebra during ${i}`)], Date.now());
        during.push(`during-${i}.md`);
        if (text.indexedGeneration === undefined) {
          whileBuilding++;
          if (snapshotTaken) wrote();
        }
      }
      await textReady;
      expect(whileBuilding).toBeGreaterThan(0);
      expect(snapshot).toHaveBeenCalledTimes(1);
      expect(await paths(backends, "zebra")).toEqual(["before.md", ...during].sort());
      expect(await paths(backends, "held3x123")).toEqual(["held/3-123.md"]);
      expect(snapshot).toHaveBeenCalledTimes(1);
    } finally {
      await backends.close();
    }
  }, 60_000);

  it("after a failed start-up build, is ready once a later search builds it", async () => {
    const seeding = await createBackends(duckConfig());
    await seeding.documents.upsertDocuments(R, [doc("kept.md", "zebra kept")], Date.now());
    await seeding.close();
    const backends = await createBackends(duckConfig(), { deferLoads: true });
    const write = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      // The first read of the chunks fails (a transient DuckDB error); the next one goes through.
      jest.spyOn(backends.units!, "snapshotChunks").mockRejectedValueOnce(new Error("IO Error: read failed"));
      let ready = false;
      void backends.textReady!.then(() => (ready = true));
      backends.startLoads!();
      while (!write.mock.calls.some(([line]) => /keyword index could not be built at start.*read failed/.test(String(line))))
        await turns(1);
      await turns(5);
      expect(ready).toBe(false);
      expect(await paths(backends, "zebra")).toEqual(["kept.md"]);
      await backends.textReady;
      expect(ready).toBe(true);
    } finally {
      write.mockRestore();
      await backends.close();
    }
  });

  it("fails its readiness when the backends close before it started", async () => {
    const backends = await createBackends(duckConfig(), { deferLoads: true });
    const textReady = backends.textReady!;
    await backends.close();
    await expect(textReady).rejects.toBeInstanceOf(UnavailableError);
  });
});
