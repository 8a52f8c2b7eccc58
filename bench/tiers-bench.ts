/**
 * Tier benchmark: operations per second of StoreFragment, GetFragment, DemoteFragment (hot to warm),
 * PromoteFragment (warm to hot), EvictLru (one from hot, to warm) and GetMetrics, first in process on the
 * embedded store (SQLite written through plus cold files, the baseline), then with the in-memory store (what
 * persistence costs), then through gRPC against a real server on port 0 (what the wire costs; its client in
 * this process), each with the same number of concurrent callers, and last the store rate at the default
 * budgets, where every store displaces LRU fragments down the tiers (a steady state with cold files written
 * and deleted). Figures are ratios against the in-process baseline measured in the same run.
 * BENCH_SCALE (default 1) scales the operation count (2,000 per phase).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { ContextTierService, Tier } from "../gen/acms/v1/tiers_pb.js";
import { MemoryTierStore } from "../src/adapters/memory/memory-tier-store.js";
import { SqliteFileTierStore } from "../src/adapters/sqlite/sqlite-file-tier-store.js";
import { openSqliteDatabase } from "../src/adapters/kit/sqlite-database.js";
import type { TierBudgets } from "../src/domain/tier-policy.js";
import { newUlid } from "../src/domain/ulid-id.js";
import type { TierStore } from "../src/ports/tier-store.js";
import { createBackends } from "../src/server/composition/composition-root.js";
import { loadConfig } from "../src/server/composition/config.js";
import { generateKey, hashKey, KeyRing } from "../src/application/access/key-ring.js";
import { startServer } from "../src/server/composition/server.js";
import { TierService } from "../src/application/tiers/tier-service.js";
import { viewOver } from "../test/support/view-over.js";

const PHASES = ["store", "get", "demote", "promote", "evict", "metrics"] as const;
type Phase = (typeof PHASES)[number];
type Rates = Record<Phase, number>;

const ROOMY: TierBudgets = { maxTokensHot: 100_000_000, maxDecisionsWarm: 10_000_000, maxDecisionsCold: 10_000_000 };
const CONCURRENCY = 16;

function text(i: number): string {
  return (
    `Step ${i}: the executor refactored module ${i % 97} and the reviewer asked for tests of case ${i % 13}; ` +
    `the plan keeps budgets within limits while context for ${i % 7} roles stays findable after a restart.`
  );
}

/** `n` calls of `op` (given 0 to n - 1) with CONCURRENCY in flight; calls per second. */
async function timed(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) await op(next++);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return n / ((performance.now() - start) / 1000);
}

const VIEW = viewOver([], { scopeId: newUlid(), owner: "bench", projectNames: ["bench/tiers"], createdAt: new Date() });

async function inProcess(store: TierStore, n: number, budgets: TierBudgets = ROOMY): Promise<Rates> {
  const tiers = await TierService.open(store, { budgets, summaryTokens: 32 });
  const id = (i: number) => `f-${i}`;
  const put = (i: number) =>
    tiers.storeFragment(VIEW, { id: id(i), content: text(i), tier: undefined, projectName: "bench/tiers", resourceId: "", metadata: {} });
  const rates = {
    store: await timed(n, put),
    get: await timed(n, (i) => tiers.getFragment(VIEW, id(i))),
    demote: await timed(n, (i) => tiers.demoteFragment(VIEW, id(i))),
    promote: await timed(n, (i) => tiers.promoteFragment(VIEW, id(i))),
    evict: await timed(n, () => tiers.evictLru(VIEW, "hot", 1)),
    metrics: await timed(n, () => tiers.getMetrics(VIEW)),
  };
  await tiers.close();
  return rates;
}

function bearer(key: string, scopeId?: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${key}`);
    if (scopeId) req.header.set("acms-scope", scopeId);
    return next(req);
  };
}

async function overGrpc(n: number): Promise<Rates> {
  const dataDir = mkdtempSync(join(tmpdir(), "acms-tier-bench-"));
  const key = generateKey();
  const config = loadConfig({
    ACMS_HOST: "127.0.0.1",
    ACMS_PORT: "0",
    ACMS_DATA_DIR: dataDir,
    ACMS_CONTEXT_MAX_TOKENS_HOT: String(ROOMY.maxTokensHot),
    ACMS_CONTEXT_MAX_DECISIONS_WARM: String(ROOMY.maxDecisionsWarm),
    ACMS_CONTEXT_MAX_DECISIONS_COLD: String(ROOMY.maxDecisionsCold),
  });
  const server = await startServer({
    config,
    keys: new KeyRing([{ name: "bench", key_sha256: hashKey(key), projects: ["*/*"], write: true }]),
    backends: await createBackends(config),
    onInternalError: () => undefined,
  });
  const sessionManager = new Http2SessionManager(server.url);
  try {
    const transport = (scopeId?: string) =>
      createGrpcTransport({ baseUrl: server.url, sessionManager, interceptors: [bearer(key, scopeId)] });
    await createClient(RegistryService, transport()).createProject({ name: "bench/tiers" });
    const scopeId = (await createClient(ScopeService, transport()).resolveScope({ projects: ["bench/tiers"] })).scope!.scopeId;
    const c: Client<typeof ContextTierService> = createClient(ContextTierService, transport(scopeId));
    const id = (i: number) => `g-${i}`;
    return {
      store: await timed(n, (i) =>
        c.storeFragment({ fragment: { fragmentId: id(i), content: text(i), projectName: "bench/tiers", tier: Tier.HOT } }),
      ),
      get: await timed(n, (i) => c.getFragment({ fragmentId: id(i) })),
      demote: await timed(n, (i) => c.demoteFragment({ fragmentId: id(i) })),
      promote: await timed(n, (i) => c.promoteFragment({ fragmentId: id(i) })),
      evict: await timed(n, () => c.evictLru({ tier: Tier.HOT, count: 1 })),
      metrics: await timed(n, () => c.getMetrics({})),
    };
  } finally {
    sessionManager.abort();
    await server.close(2000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function durableStore<T>(fn: (store: SqliteFileTierStore) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "acms-tier-bench-"));
  const db = openSqliteDatabase(join(dir, "acms.db"));
  try {
    return await fn(new SqliteFileTierStore(db, join(dir, "cold")));
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function fmt(rate: number): string {
  return `${Math.round(rate).toLocaleString("en-US")} ops/s`;
}

/** Runs the tier benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const n = Math.max(100, Math.round(2000 * scale));
  const base = await durableStore((store) => inProcess(store, n));
  const memory = await inProcess(new MemoryTierStore(), n);
  const grpc = await overGrpc(n);
  process.stdout.write(`tier operations, ${n} per phase, ${CONCURRENCY} concurrent callers (gRPC: over h2c, the client in this process)\n`);
  for (const p of PHASES) {
    process.stdout.write(
      `  ${p.padEnd(8)} in process (SQLite + cold files): ${fmt(base[p])}; ` +
        `in-memory store ${fmt(memory[p])} (${(memory[p] / base[p]).toFixed(1)}x); ` +
        `gRPC ${fmt(grpc[p])} (${(grpc[p] / base[p]).toFixed(2)}x in process)\n`,
    );
  }
  const full: TierBudgets = {
    maxTokensHot: 2000,
    maxDecisionsWarm: Math.max(10, Math.round(n / 8)),
    maxDecisionsCold: Math.max(10, Math.round(n / 4)),
  };
  const steady = await durableStore(async (store) => {
    const tiers = await TierService.open(store, { budgets: full, summaryTokens: 32 });
    const put = (i: number) =>
      tiers.storeFragment(VIEW, {
        id: `s-${i}`,
        content: text(i),
        tier: undefined,
        projectName: "bench/tiers",
        resourceId: "",
        metadata: {},
      });
    // Fill every tier first, so each measured store displaces one fragment down each tier and deletes one from cold.
    for (let i = 0; i < full.maxDecisionsWarm + full.maxDecisionsCold + 100; i++) await put(-1 - i);
    const rate = await timed(n, put);
    await tiers.close();
    return rate;
  });
  process.stdout.write(
    `  store at full tiers (each store moves one fragment hot to warm, one warm to cold with a summary, deletes one from cold): ` +
      `${fmt(steady)} (${(steady / base.store).toFixed(2)}x the roomy store)\n`,
  );
}
