/**
 * Health says what is ready, on the real server: the embedded graph store loads into its query workers in
 * the background, so the server serves at once while grpc.health.v1 reports the graph service NOT_SERVING
 * until the store is loaded, and likewise the vector service until the vectors are, and the RAG service
 * until both are (the test holds each load back to see that state deterministically). On DuckDB the keyword
 * index is built in the background too: the text service and RAG are NOT_SERVING until it is.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { KeyRing } from "../../src/application/access/key-ring.js";
import { startServer } from "../../src/server/composition/server.js";
import { quietLog } from "../support/quiet-log.js";

type Status = (service: string) => Promise<ServingStatus>;

/**
 * A real server whose `ready` load (graph store, vectors or keyword index) is held back until `release` is
 * called; `body` gets a Health client and a status reader. The other loads finish first. `engine` adds to
 * the environment (say ACMS_DUCKDB_PATH) given the data directory.
 */
async function withHeldLoad(
  ready: "graphReady" | "vectorReady" | "textReady",
  body: (
    health: ReturnType<typeof createClient<typeof Health>>,
    status: Status,
    release: () => void,
    loaded: () => Promise<void>,
  ) => Promise<void>,
  engine: (dataDir: string) => Record<string, string> = () => ({}),
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "acms-health-ready-"));
  const config = loadConfig({ ACMS_HOST: "127.0.0.1", ACMS_PORT: "0", ACMS_DATA_DIR: dataDir, ...engine(dataDir) });
  const backends = await createBackends(config);
  const realLoad = backends[ready];
  expect(realLoad).toBeDefined();
  await Promise.all(
    (["graphReady", "vectorReady", "textReady"] as const).filter((other) => other !== ready).map((other) => backends[other]),
  );
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const heldLoad = Promise.all([realLoad, held]).then(() => undefined);
  backends[ready] = heldLoad;
  const server = await startServer({ config, keys: new KeyRing([]), backends, log: quietLog() });
  const sessions = new Http2SessionManager(server.url);
  try {
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.url, sessionManager: sessions }));
    const status = async (service: string) => (await health.check({ service })).status;
    await body(health, status, release, () => heldLoad);
  } finally {
    sessions.abort();
    await server.close(0);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe("health readiness (real server, embedded backends)", () => {
  it("serves before the graph store is loaded, with the graph service NOT_SERVING until it is", async () => {
    await withHeldLoad("graphReady", async (health, status, release) => {
      expect(await status("")).toBe(ServingStatus.SERVING);
      expect(await status("acms.v1.TextBackendService")).toBe(ServingStatus.SERVING);
      expect(await status("acms.v1.GraphBackendService")).toBe(ServingStatus.NOT_SERVING);
      // RAG fuses graph evidence: not ready before the graph is.
      expect(await status("acms.v1.RagService")).toBe(ServingStatus.NOT_SERVING);
      expect(await status("acms.v1.VectorBackendService")).toBe(ServingStatus.SERVING);
      const watch = health.watch({ service: "acms.v1.GraphBackendService" })[Symbol.asyncIterator]();
      expect((await watch.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
      const next = watch.next();
      release();
      expect((await next).value?.status).toBe(ServingStatus.SERVING);
      expect(await status("acms.v1.GraphBackendService")).toBe(ServingStatus.SERVING);
      expect(await status("acms.v1.RagService")).toBe(ServingStatus.SERVING);
      await watch.return?.();
    });
  });
  it("serves before the vectors are loaded, with the vector service NOT_SERVING until they are", async () => {
    await withHeldLoad("vectorReady", async (_health, status, release, loaded) => {
      expect(await status("")).toBe(ServingStatus.SERVING);
      expect(await status("acms.v1.GraphBackendService")).toBe(ServingStatus.SERVING);
      expect(await status("acms.v1.VectorBackendService")).toBe(ServingStatus.NOT_SERVING);
      // RAG fuses vector hits: not ready before the vectors are.
      expect(await status("acms.v1.RagService")).toBe(ServingStatus.NOT_SERVING);
      release();
      await loaded();
      expect(await status("acms.v1.VectorBackendService")).toBe(ServingStatus.SERVING);
      expect(await status("acms.v1.RagService")).toBe(ServingStatus.SERVING);
    });
  });
  it("on DuckDB, serves before the keyword index is built, with the text service NOT_SERVING until it is", async () => {
    await withHeldLoad(
      "textReady",
      async (_health, status, release, loaded) => {
        expect(await status("")).toBe(ServingStatus.SERVING);
        expect(await status("acms.v1.GraphBackendService")).toBe(ServingStatus.SERVING);
        expect(await status("acms.v1.VectorBackendService")).toBe(ServingStatus.SERVING);
        expect(await status("acms.v1.TextBackendService")).toBe(ServingStatus.NOT_SERVING);
        // RAG fuses keyword hits: not ready before the keyword index is.
        expect(await status("acms.v1.RagService")).toBe(ServingStatus.NOT_SERVING);
        release();
        await loaded();
        expect(await status("acms.v1.TextBackendService")).toBe(ServingStatus.SERVING);
        expect(await status("acms.v1.RagService")).toBe(ServingStatus.SERVING);
      },
      (dataDir) => ({ ACMS_DUCKDB_PATH: join(dataDir, "docs.duckdb") }),
    );
  });
});
