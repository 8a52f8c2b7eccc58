/**
 * The service of the vector peer bench in a process of its own (forked by peers-vector.ts, compiled as the
 * server is deployed): `DATA_DIR KEY_SHA256` runs the real ACMS server (embedded engines, 384 dimensions)
 * over a fresh data directory. Over IPC it reports `{ port }` once listening, answers `"indexed"` once
 * the in-process vector index has built its graphs and cells for what was written (`{ ms }`, the time
 * waited), `"cpu"` with its own `process.cpuUsage()`, and exits on `"stop"`.
 */
import { createBackends } from "../src/server/composition/composition-root.js";
import { loadConfig } from "../src/server/composition/config.js";
import { KeyRing } from "../src/application/access/key-ring.js";
import { startServer } from "../src/server/composition/server.js";

const [dataDir, keySha256] = process.argv.slice(2);
const config = loadConfig({
  ACMS_HOST: "127.0.0.1",
  ACMS_PORT: "0",
  ACMS_DATA_DIR: dataDir,
  // As deployed, but with the rate quota out of the way of a bulk load's thousand registrations.
  ACMS_QUOTA_RATE: "1000000",
  ACMS_QUOTA_BURST: "10000000",
});
const backends = await createBackends(config);
const server = await startServer({
  config,
  keys: new KeyRing([{ name: "bench", key_sha256: keySha256, projects: ["*/*"], write: true }]),
  backends,
  onInternalError: (err) => process.stderr.write(`internal error: ${String(err)}\n`),
});
const vectors = backends.vector as unknown as { whenIndexed?: () => Promise<void> } | undefined;
process.on("message", async (msg: string) => {
  if (msg === "indexed") {
    const started = performance.now();
    await backends.vectorReady;
    await vectors?.whenIndexed?.();
    process.send!({ ms: performance.now() - started });
  }
  if (msg === "cpu") process.send!({ cpu: process.cpuUsage() });
  if (msg === "stop") {
    await server.close(1000);
    process.exit(0);
  }
});
process.send!({ port: server.port });
