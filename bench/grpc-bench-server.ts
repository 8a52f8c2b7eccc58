/**
 * One server of the gRPC benchmark in a process of its own (forked by grpc-bench.ts): `service DATA_DIR
 * KEY_SHA256` runs the real ACMS server over the data directory; `plain DB_PATH RESOURCE_IDS` runs the plain
 * grpc-js baseline over the same SQLite file. Over IPC it reports `{ port, rss }` once listening (the resident set size then), answers
 * `"cpu"` with its own `process.cpuUsage()` (so CPU per call is the server's alone), `"memory"` with its
 * resident set size, `"graph"` with the time since its start (ms) at which the graph store was loaded (the
 * server serves before that), `"vectors"` with the time at which the vectors were loaded (likewise) and its
 * resident set size then, and exits on `"stop"`.
 */
import { createBackends } from "../src/server/composition/composition-root.js";
import { loadConfig } from "../src/server/composition/config.js";
import { KeyRing } from "../src/application/access/key-ring.js";
import { startServer } from "../src/server/composition/server.js";
import { startPlainServer } from "./plain-grpc-server.js";

const [role, path, extra] = process.argv.slice(2);

async function start(): Promise<{ port: number; close(): Promise<void> | void; graphReady?: Promise<void>; vectorReady?: Promise<void> }> {
  if (role === "plain") return startPlainServer(path, extra.split(","));
  // The rate quota's checks run on every call, as deployed, but its limits are raised past what the load
  // generator can send: the plain server has no quota, and the default (1,000 calls/s, burst 2,000) refused
  // part of the tier runs on a quiet machine, which answers faster than that.
  const config = loadConfig({
    ACMS_HOST: "127.0.0.1",
    ACMS_PORT: "0",
    ACMS_DATA_DIR: path,
    ACMS_QUOTA_RATE: "1000000",
    ACMS_QUOTA_BURST: "10000000",
  });
  const backends = await createBackends(config, { deferLoads: true });
  const { graphReady, vectorReady } = backends;
  const server = await startServer({
    config,
    keys: new KeyRing([{ name: "bench", key_sha256: extra, projects: ["*/*"], write: true }]),
    backends,
    onInternalError: (err) => process.stderr.write(`internal error: ${String(err)}\n`),
  });
  return { port: server.port, close: () => server.close(1000), graphReady, vectorReady };
}

const server = await start();
process.on("message", async (msg: string) => {
  if (msg === "cpu") process.send!({ cpu: process.cpuUsage() });
  if (msg === "memory") process.send!({ rss: process.memoryUsage().rss });
  if (msg === "graph") await server.graphReady?.then(() => process.send!({ ms: performance.now() }));
  if (msg === "vectors")
    await (server.vectorReady ?? Promise.resolve()).then(() => process.send!({ ms: performance.now(), rss: process.memoryUsage().rss }));
  if (msg === "stop") {
    await server.close();
    process.exit(0);
  }
});
process.send!({ port: server.port, rss: process.memoryUsage().rss });
