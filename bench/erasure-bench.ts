/**
 * Erasure benchmark: DeleteResource of a resource of N chunks (100,000 at BENCH_SCALE=1, each with a vector)
 * on the embedded default through the real server, and what it costs another tenant meanwhile: that tenant's
 * keyword search p50 while the erasure runs, as a ratio to its p50 without it, measured in the same run. The
 * erasure runs in slices on the indexer's write section, so the other tenant's searches keep being answered
 * between slices (the count answered during the erasure is printed; zero would mean it blocked the loop).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../gen/acms/v1/text_pb.js";
import { generateKey, hashKey, KeyRing } from "../src/application/access/key-ring.js";
import { newUlid } from "../src/domain/ulid-id.js";
import { createBackends } from "../src/server/composition/composition-root.js";
import { loadConfig } from "../src/server/composition/config.js";
import { startServer } from "../src/server/composition/server.js";
import { RequestLog } from "../src/server/observability/request-log.js";
import { formatMs, median, percentile } from "./bench-timing.js";

const DIM = 8;

function bearer(key: string, scopeId?: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${key}`);
    if (scopeId) req.header.set("acms-scope", scopeId);
    return next(req);
  };
}

function vector(i: number): Float32Array {
  const v = new Float32Array(DIM);
  for (let d = 0; d < DIM; d++) v[d] = Math.sin(i * (d + 1));
  return v;
}

export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const chunks = Math.max(500, Math.round(100_000 * scale));
  const dataDir = mkdtempSync(join(tmpdir(), "acms-erasure-bench-"));
  const key = generateKey();
  const config = loadConfig({ ACMS_DATA_DIR: dataDir, ACMS_HOST: "127.0.0.1", ACMS_PORT: "0", ACMS_EMBEDDING_DIM: String(DIM) });
  const backends = await createBackends(config);
  const sessions: Http2SessionManager[] = [];
  try {
    await backends.registry.createProject("bench/a");
    await backends.registry.createProject("bench/b");
    const doomed = newUlid();
    const other = newUlid();
    for (const [id, project] of [
      [doomed, "bench/a"],
      [other, "bench/b"],
    ] as const) {
      await backends.registry.registerResource({ id, project, alias: "r", kind: "repo", parentIds: [], metadata: {} });
    }
    const seedStart = performance.now();
    for (let from = 0; from < chunks; from += 1000) {
      const docs = [];
      for (let i = from; i < Math.min(chunks, from + 1000); i++) {
        const text = `tenant a document ${i} about topic ${i % 101} and term${i % 997}`;
        docs.push({ path: `d/${i}.md`, content: text, metadata: {}, chunks: [{ text, embedding: vector(i) }] });
      }
      await backends.documents.upsertDocuments(doomed, docs, Date.now());
    }
    const b = [];
    for (let i = 0; i < 2000; i++) {
      const text = `tenant b note ${i} about zebra ${i % 31}`;
      b.push({ path: `n/${i}.md`, content: text, metadata: {}, chunks: [{ text, embedding: vector(-i) }] });
    }
    await backends.documents.upsertDocuments(other, b, Date.now());
    const seedMs = performance.now() - seedStart;
    const server = await startServer({
      config,
      keys: new KeyRing([{ name: "ops", key_sha256: hashKey(key), projects: ["*/*"], write: true }]),
      backends,
      log: new RequestLog("info", { write: () => true }),
    });
    try {
      await backends.vectorReady;
      const transport = (scopeId?: string) => {
        const sessionManager = new Http2SessionManager(server.url);
        sessions.push(sessionManager);
        return createGrpcTransport({ baseUrl: server.url, sessionManager, interceptors: [bearer(key, scopeId)] });
      };
      const { scope } = await createClient(ScopeService, transport()).resolveScope({ projects: ["bench/b"] });
      const search = createClient(TextBackendService, transport(scope!.scopeId));
      const once = async (): Promise<number> => {
        const t0 = performance.now();
        await search.search({ query: "zebra", maxResults: 10 });
        return performance.now() - t0;
      };
      for (let i = 0; i < 50; i++) await once();
      const baseline: number[] = [];
      for (let i = 0; i < 300; i++) baseline.push(await once());
      const registry = createClient(RegistryService, transport());
      let erasing = true;
      const t0 = performance.now();
      // A large erasure may outlive the call's time budget: the server goes on with it, and a retried
      // DeleteResource waits for the same erasure and answers its report.
      const deleteUntilAnswered = async (): Promise<Awaited<ReturnType<typeof registry.deleteResource>>> => {
        for (;;) {
          try {
            return await registry.deleteResource({ resourceId: doomed });
          } catch (err) {
            if (ConnectError.from(err).code !== Code.DeadlineExceeded) throw err;
          }
        }
      };
      const erase = deleteUntilAnswered().finally(() => (erasing = false));
      const during: number[] = [];
      while (erasing) {
        const ms = await once();
        if (erasing) during.push(ms);
      }
      const { report } = await erase;
      const eraseMs = performance.now() - t0;
      if (Number(report!.chunks) !== chunks) throw new Error(`the erasure reported ${report!.chunks} chunks, ${chunks} were written`);
      if (during.length === 0) throw new Error("no search of the other tenant was answered while the erasure ran");
      const p50 = median(baseline);
      const p50During = median(during);
      process.stdout.write(
        [
          `erasure: DeleteResource of ${chunks} chunks with vectors (seeded in ${(seedMs / 1000).toFixed(1)} s), embedded default`,
          `  erased in ${(eraseMs / 1000).toFixed(2)} s (${Math.round(chunks / (eraseMs / 1000))} chunks/s); report: ${report!.documents} documents, ${report!.chunks} chunks, ${report!.vectors} vectors`,
          `  other tenant's search p50: ${formatMs(p50)} alone, ${formatMs(p50During)} during the erasure (x${(p50During / p50).toFixed(2)}); p99 ${formatMs(percentile(baseline, 0.99))} -> ${formatMs(percentile(during, 0.99))}`,
          `  searches answered during the erasure: ${during.length}`,
          "",
        ].join("\n"),
      );
    } finally {
      for (const s of sessions) s.abort();
      await server.close(0);
    }
  } catch (err) {
    await backends.close().catch(() => undefined);
    throw err;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
