import { openPostgresPool, type PostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import { PostgresRegistryStore } from "../../src/adapters/postgres/postgres-registry-store.js";
import { PostgresTierStore } from "../../src/adapters/postgres/postgres-tier-store.js";
import { TierService } from "../../src/application/tiers/tier-service.js";
import { NotFoundError } from "../../src/domain/errors.js";
import type { TierName } from "../../src/domain/tier-fragment.js";
import type { TierBudgets } from "../../src/domain/tier-policy.js";
import { newUlid } from "../../src/domain/ulid-id.js";
import { openTestPostgres, type PostgresTestDatabase } from "../support/engines/postgres-harness.js";
import { scopeView } from "./tier-fixtures.js";

/**
 * Two tier services on one database, each with its own pool: what two servers on ACMS_POSTGRES_URL are
 * (the process-level pair is in test/postgres/replicas.test.ts). Placement, LRU order and budgets are the
 * database's, so each sees the other's moves at its next call, and budgets hold across them.
 */
const BUDGETS: TierBudgets = { maxTokensHot: 40, maxDecisionsWarm: 3, maxDecisionsCold: 4 };
const view = scopeView(["local/a", "local/b"]);

/** `n` tokens of content (each " w" is one token). */
function tokens(n: number): string {
  return "w".concat(" w".repeat(n - 1));
}

let db: PostgresTestDatabase;
const pools: PostgresPool[] = [];
const services: TierService[] = [];

async function server(budgets = BUDGETS, pruning?: { kept: number; every: number }): Promise<TierService> {
  const pool = openPostgresPool(db.url);
  pools.push(pool);
  const s = await TierService.open(new PostgresTierStore(pool, undefined, pruning), { budgets, summaryTokens: 8 });
  services.push(s);
  return s;
}

/** What the database holds of `project`: fragments per tier and hot tokens. */
async function held(project: string): Promise<{ hot: number; warm: number; cold: number; hotTokens: number }> {
  const { rows } = await db.pool.query<{ tier: TierName; n: number; t: number }>(
    "SELECT tier, count(*)::int AS n, sum(token_count)::int AS t FROM tier_fragments WHERE project_name = $1 GROUP BY tier",
    [project],
  );
  const by = new Map(rows.map((r) => [r.tier, r]));
  return { hot: by.get("hot")?.n ?? 0, warm: by.get("warm")?.n ?? 0, cold: by.get("cold")?.n ?? 0, hotTokens: by.get("hot")?.t ?? 0 };
}

beforeEach(async () => {
  db = await openTestPostgres();
});
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
  for (const p of pools.splice(0)) await p.end();
  await db.close();
});

describe("tier placement shared by two servers on one PostgreSQL database", () => {
  test("a fragment promoted, demoted or evicted through one server is seen where it went through the other, at its next call", async () => {
    const a = await server();
    const b = await server();
    const { fragment } = await a.storeFragment(view, {
      id: "note",
      content: "a warm note",
      tier: "warm",
      projectName: "local/a",
      resourceId: "",
      metadata: {},
    });
    expect((await b.getFragment(view, fragment.id)).tier).toBe("warm");
    await a.promoteFragment(view, "note");
    expect((await b.getFragment(view, "note")).tier).toBe("hot");
    expect((await b.getForActor(view, "strategist", [], false)).map((f) => [f.id, f.tier])).toEqual([["note", "hot"]]);
    expect((await b.getMetrics(view)).population).toEqual({ hot: 1, warm: 0, cold: 0 });
    // Back down through b, seen through a; then evicted out of cold through a, gone through b.
    await b.demoteFragment(view, "note");
    await b.demoteFragment(view, "note");
    const cold = await a.getFragment(view, "note");
    expect([cold.tier, cold.content]).toEqual(["cold", "a warm note"]);
    expect(await a.evictLru(view, "cold", 1)).toEqual(["note"]);
    await expect(b.getFragment(view, "note")).rejects.toThrow("not found");
    expect((await b.getMetrics(view)).population).toEqual({ hot: 0, warm: 0, cold: 0 });
    // Stored again through b under the same id: a sees the new one.
    await b.storeFragment(view, {
      id: "note",
      content: "stored again",
      tier: undefined,
      projectName: "local/a",
      resourceId: "",
      metadata: {},
    });
    expect((await a.getFragment(view, "note")).content).toBe("stored again");
  });

  test("a server that fell behind pruned removals reloads every fragment: none it held is kept after its removal", async () => {
    const pruning = { kept: 2, every: 1 };
    const a = await server(BUDGETS, pruning);
    const b = await server(BUDGETS, pruning);
    const store = (s: TierService, id: string) =>
      s.storeFragment(view, { id, content: `note ${id}`, tier: "cold", projectName: "local/a", resourceId: "", metadata: {} });
    for (const id of ["c1", "c2", "c3"]) await store(a, id);
    expect((await b.getForActor(view, "strategist", [], false)).map((f) => f.id)).toEqual(["c3", "c2", "c1"]);
    // Through a: three removals and more writes, so the removals b has not seen are pruned.
    expect(await a.evictLru(view, "cold", 3)).toEqual(["c1", "c2", "c3"]);
    for (const id of ["c4", "c5"]) await store(a, id);
    await a.evictLru(view, "cold", 1);
    const { rows } = await db.pool.query<{ pruned: number }>("SELECT removals_pruned_through AS pruned FROM tier_sync");
    expect(rows[0].pruned).toBeGreaterThan(0);
    expect((await b.getForActor(view, "strategist", [], false)).map((f) => f.id)).toEqual(["c5"]);
    expect((await b.getMetrics(view)).population).toEqual({ hot: 0, warm: 0, cold: 1 });
  });

  test("counters are the deployment's: hits, misses and moves through either server count in GetMetrics read through either; a refused operation counts nothing", async () => {
    const a = await server();
    const b = await server();
    await a.storeFragment(view, { id: "h", content: "a hot note", tier: undefined, projectName: "local/a", resourceId: "", metadata: {} });
    await a.storeFragment(view, { id: "w", content: "a warm note", tier: "warm", projectName: "local/b", resourceId: "", metadata: {} });
    await b.getFragment(view, "h");
    await a.getFragment(view, "w");
    await expect(b.getFragment(view, "absent")).rejects.toThrow("not found");
    await b.promoteFragment(view, "w");
    await a.demoteFragment(view, "h");
    // Refused (already hot) after nothing was written: counts nothing.
    await expect(b.promoteFragment(view, "w")).rejects.toThrow("already in hot");
    await b.evictLru(view, "warm", 1);
    const expected = {
      hotHits: 1,
      hotMisses: 2,
      warmHits: 1,
      warmMisses: 1,
      coldHits: 0,
      misses: 1,
      promotions: 1,
      demotions: 2,
      evictions: 0,
    };
    for (const s of [a, b]) {
      const { population, tokens: _tokens, ...counters } = await s.getMetrics(view);
      expect(counters).toEqual(expected);
      expect(population).toEqual({ hot: 1, warm: 0, cold: 1 });
    }
    // Each project's counters are its own: the hit on "h" (local/a) is not in a scope of local/b only.
    const { hotHits, warmHits } = await b.getMetrics(scopeView(["local/b"]));
    expect([hotHits, warmHits]).toEqual([0, 1]);
  });

  test("LRU order is the deployment's: a read through one server keeps that fragment from being the one displaced through the other", async () => {
    const a = await server();
    const b = await server();
    for (const id of ["w1", "w2", "w3"])
      await a.storeFragment(view, { id, content: `warm ${id}`, tier: "warm", projectName: "local/a", resourceId: "", metadata: {} });
    // w1 is the least recently used until b reads it; then w2 is, and a's store into the full warm tier demotes w2.
    await b.getFragment(view, "w1");
    const { displaced } = await a.storeFragment(view, {
      id: "w4",
      content: "warm w4",
      tier: "warm",
      projectName: "local/a",
      resourceId: "",
      metadata: {},
    });
    expect(displaced).toEqual([{ id: "w2", from: "warm", to: "cold", evicted: false }]);
    expect((await b.getForActor(view, "strategist", ["local/a"], false)).map((f) => [f.id, f.tier])).toEqual([
      ["w4", "warm"],
      ["w1", "warm"],
      ["w3", "warm"],
      ["w2", "cold"],
    ]);
  });

  test("both servers storing into one project at once: its budgets hold, and another project's fragments are never displaced", async () => {
    const a = await server();
    const b = await server();
    // Project b's fragments fit its budgets: nothing may ever move them.
    const before: [string, TierName][] = [
      ["b-hot", "hot"],
      ["b-warm", "warm"],
      ["b-cold", "cold"],
    ];
    for (const [id, tier] of before)
      await a.storeFragment(view, { id, content: tokens(30), tier, projectName: "local/b", resourceId: "", metadata: {} });
    const stores = (s: TierService, tag: string) =>
      Array.from({ length: 12 }, (_, i) =>
        s.storeFragment(view, {
          id: `${tag}${i}`,
          content: tokens(15),
          tier: i % 3 === 0 ? "warm" : undefined,
          projectName: "local/a",
          resourceId: "",
          metadata: {},
        }),
      );
    const results = await Promise.all([...stores(a, "a"), ...stores(b, "b")]);
    // Every store was accepted; the project's tiers are within budget in the database and through either server.
    expect(results).toHaveLength(24);
    const inA = await held("local/a");
    expect(inA.hotTokens).toBeLessThanOrEqual(BUDGETS.maxTokensHot);
    expect(inA.warm).toBeLessThanOrEqual(BUDGETS.maxDecisionsWarm);
    expect(inA.cold).toBeLessThanOrEqual(BUDGETS.maxDecisionsCold);
    // 24 fragments of 15 tokens into 40 + 3 + 4 places: the tiers are full, the rest was evicted out of cold.
    expect(inA).toEqual({ hot: 2, warm: 3, cold: 4, hotTokens: 30 });
    for (const s of [a, b]) {
      const m = await s.getMetrics(scopeView(["local/a"]));
      expect([m.population, m.tokens.hot]).toEqual([{ hot: 2, warm: 3, cold: 4 }, 30]);
    }
    expect(await held("local/b")).toEqual({ hot: 1, warm: 1, cold: 1, hotTokens: 30 });
    const listed = await b.getForActor(scopeView(["local/b"]), "strategist", [], false);
    expect(listed.map((f) => [f.id, f.tier])).toEqual(before);
    // No displacement named a fragment of project b, and every one displaced is out of the tiers or below.
    const named = results.flatMap((r) => r.displaced.map((d) => d.id));
    expect(named.filter((id) => id.startsWith("b-"))).toEqual([]);
  });
});

describe("a fragment against an erasure made through another server", () => {
  test("once the other server has begun erasing its resource or deleted its project, a store through this one is NOT_FOUND", async () => {
    // The scope was resolved before the erasure, as a call's may be while it waits for the deployment's tier
    // lock; the registry is the database's, read again inside the write.
    const registryA = new PostgresRegistryStore(db.pool);
    const registryB = new PostgresRegistryStore(db.pool);
    const poolA = openPostgresPool(db.url);
    const poolB = openPostgresPool(db.url);
    pools.push(poolA, poolB);
    const open = async (pool: PostgresPool, registry: PostgresRegistryStore) => {
      const s = await TierService.open(new PostgresTierStore(pool), { budgets: BUDGETS, summaryTokens: 8, registry });
      services.push(s);
      return s;
    };
    const a = await open(poolA, registryA);
    const b = await open(poolB, registryB);
    const doomed = newUlid();
    await registryB.createProject("local/a");
    await registryB.registerResource({ id: doomed, project: "local/a", alias: "doomed", kind: "docs", parentIds: [], metadata: {} });
    const stale = scopeView(["local/a"], [doomed]);
    const note = (content: string, resourceId = doomed) => ({
      id: "",
      content,
      tier: undefined,
      projectName: "local/a",
      resourceId,
      metadata: {},
    });
    await a.storeFragment(stale, note("before the erasure"));

    expect(await registryB.beginErasure(doomed)).toBeDefined();
    await expect(a.storeFragment(stale, note("while it is erased"))).rejects.toBeInstanceOf(NotFoundError);
    expect(await b.eraseFragments({ resourceId: doomed })).toEqual({ fragments: 1, files: 0 });
    await registryB.finishErasure(doomed);
    await expect(a.storeFragment(stale, note("after it"))).rejects.toBeInstanceOf(NotFoundError);
    await a.storeFragment(stale, note("about the project", ""));
    await registryB.deleteProject("local/a");
    await b.eraseFragments({ projectName: "local/a" });
    await expect(a.storeFragment(stale, note("after the project went", ""))).rejects.toBeInstanceOf(NotFoundError);
    const { rows } = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tier_fragments");
    expect(rows[0].n).toBe(0);
  });
});
