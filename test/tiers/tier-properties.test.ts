import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { MemoryTierStore } from "../../src/adapters/memory/memory-tier-store.js";
import { SqliteFileTierStore } from "../../src/adapters/sqlite/sqlite-file-tier-store.js";
import { openSqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { AcmsError } from "../../src/domain/errors.js";
import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import type { TierName } from "../../src/domain/tier-fragment.js";
import type { TierBudgets } from "../../src/domain/tier-policy.js";
import { newUlid } from "../../src/domain/ulid-id.js";
import type { TierStore } from "../../src/ports/tier-store.js";
import { TierService } from "../../src/application/tiers/tier-service.js";
import { openPostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import { PostgresTierStore } from "../../src/adapters/postgres/postgres-tier-store.js";
import { openTestPostgres } from "../support/engines/postgres-harness.js";
import { scopeView } from "./tier-fixtures.js";
import { TierModel, type Outcome, type Owner, type Principal, type TierOp } from "./tier-model.js";

const R = newUlid();
const PRINCIPALS = ["p", "q"] as const;
/** Both principals get the same projects and resource: only the principal namespace keeps them apart. */
const FULL: Record<Principal, ScopedBackendView> = {
  p: scopeView(["local/a", "local/b"], [R], "p"),
  q: scopeView(["local/a", "local/b"], [R], "q"),
};
const NARROW: Record<Principal, ScopedBackendView> = { p: scopeView(["local/a"], [], "p"), q: scopeView(["local/a"], [], "q") };
const OWNERS: Record<Owner, { projectName: string; resourceId: string }> = {
  a: { projectName: "local/a", resourceId: "" },
  b: { projectName: "local/b", resourceId: "" },
  "a+r": { projectName: "local/a", resourceId: R },
};
const TIERS = ["hot", "warm", "cold"] as const;

const idArb = fc.constantFrom(...Array.from({ length: 10 }, (_, i) => `f${i}`));
const tierArb = fc.constantFrom<TierName>(...TIERS);
const principalArb = fc.constantFrom<Principal>(...PRINCIPALS);
const opArb: fc.Arbitrary<TierOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("store" as const),
      principal: principalArb,
      id: idArb,
      tokens: fc.integer({ min: 1, max: 50 }),
      tier: fc.option(tierArb, { nil: undefined }),
      owner: fc.constantFrom<Owner>("a", "b", "a+r"),
      narrow: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom("get" as const, "promote" as const, "demote" as const),
      principal: principalArb,
      id: idArb,
      narrow: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("evict" as const),
      principal: principalArb,
      tier: tierArb,
      count: fc.integer({ min: 1, max: 4 }),
      narrow: fc.boolean(),
    }),
  },
);
const budgetsArb: fc.Arbitrary<TierBudgets> = fc.record({
  maxTokensHot: fc.integer({ min: 30, max: 120 }),
  maxDecisionsWarm: fc.integer({ min: 1, max: 5 }),
  maxDecisionsCold: fc.integer({ min: 1, max: 5 }),
});

/** `n` tokens of content, starting with the storing principal's name so a swap across principals shows. */
function content(n: number, principal: Principal): string {
  return principal.concat(" w".repeat(n - 1));
}

function outcomeOf(err: unknown): Outcome {
  if (!(err instanceof AcmsError)) throw err;
  switch (err.kind) {
    case "not_found":
    case "failed_precondition":
    case "invalid_argument":
    case "already_exists":
    case "scope_violation":
      return err.kind;
    default:
      throw err;
  }
}

async function run(tiers: TierService, op: TierOp): Promise<Outcome> {
  const view = (op.narrow ? NARROW : FULL)[op.principal];
  try {
    switch (op.kind) {
      case "store":
        await tiers.storeFragment(view, {
          id: op.id,
          content: content(op.tokens, op.principal),
          tier: op.tier,
          metadata: {},
          ...OWNERS[op.owner],
        });
        break;
      case "get":
        await tiers.getFragment(view, op.id);
        break;
      case "promote":
        await tiers.promoteFragment(view, op.id);
        break;
      case "demote":
        await tiers.demoteFragment(view, op.id);
        break;
      case "evict":
        await tiers.evictLru(view, op.tier, op.count);
        break;
    }
    return "ok";
  } catch (err) {
    return outcomeOf(err);
  }
}

/** Every invariant, checked against the reference model after each operation. */
/** `store` (in memory) is compared tier by tier; `afterRestart` skips the counters, which count since start. */
async function checkInvariants(
  tiers: TierService,
  model: TierModel,
  budgets: TierBudgets,
  store?: TierStore,
  afterRestart = false,
): Promise<void> {
  let hotTokens = 0;
  for (const principal of PRINCIPALS) {
    const listed = await tiers.getForActor(FULL[principal], "strategist", [], false);
    // Only the principal's own fragments, one tier each: no id listed twice, and the store agrees on every tier.
    expect(listed.every((f) => f.owner === principal)).toBe(true);
    expect(new Set(listed.map((f) => f.id)).size).toBe(listed.length);
    if (store instanceof MemoryTierStore) expect(new Map(listed.map((f) => [f.id, f.tier]))).toEqual(store.tiersOf(principal));
    // LRU order honoured: each tier's fragments, least recently used first, as the model has them.
    for (const tier of TIERS) {
      const ids = listed
        .filter((f) => f.tier === tier)
        .map((f) => f.id)
        .reverse();
      expect(ids).toEqual(model.ids(tier, principal));
    }
    // Access order is also what the timestamps say (ties allowed: the sequence number decides).
    for (let i = 1; i < listed.length; i++) {
      if (listed[i].tier === listed[i - 1].tier)
        expect(listed[i].lastAccessedAt.getTime()).toBeLessThanOrEqual(listed[i - 1].lastAccessedAt.getTime());
    }
    // Metrics: counters, population and tokens are the principal's own, over the view's projects.
    const m = await tiers.getMetrics(FULL[principal]);
    if (!afterRestart)
      expect({ ...m, population: undefined, tokens: undefined }).toEqual({
        ...model.counters(principal, false),
        population: undefined,
        tokens: undefined,
      });
    const narrow = await tiers.getMetrics(NARROW[principal]);
    if (!afterRestart)
      expect({ ...narrow, population: undefined, tokens: undefined }).toEqual({
        ...model.counters(principal, true),
        population: undefined,
        tokens: undefined,
      });
    expect(m.population).toEqual({
      hot: model.ids("hot", principal).length,
      warm: model.ids("warm", principal).length,
      cold: model.ids("cold", principal).length,
    });
    // The narrow view sees one project and no resource: its sizes are those of what it can list.
    const inNarrow = listed.filter((f) => f.projectName === "local/a" && f.resourceId === "");
    const sizes = (tier: TierName) => inNarrow.filter((f) => f.tier === tier);
    expect(narrow.population).toEqual({ hot: sizes("hot").length, warm: sizes("warm").length, cold: sizes("cold").length });
    expect(narrow.tokens).toEqual(Object.fromEntries(TIERS.map((t) => [t, sizes(t).reduce((a, f) => a + f.tokenCount, 0)])));
    expect(m.hotMisses).toBe(m.warmHits + m.warmMisses);
    expect(m.warmMisses).toBe(m.coldHits + m.misses);
    hotTokens += m.tokens.hot;
  }
  // Budgets held by each pool (one principal's fragments of one project) on its own.
  for (const principal of PRINCIPALS) {
    for (const project of ["a", "b"] as const) {
      expect(model.poolHotTokens(principal, project)).toBeLessThanOrEqual(budgets.maxTokensHot);
      expect(model.poolSize("warm", principal, project)).toBeLessThanOrEqual(budgets.maxDecisionsWarm);
      expect(model.poolSize("cold", principal, project)).toBeLessThanOrEqual(budgets.maxDecisionsCold);
    }
  }
  const totals = tiers.totals();
  expect(totals.population).toEqual({ hot: model.size("hot"), warm: model.size("warm"), cold: model.size("cold") });
  expect(hotTokens).toBe(totals.tokens.hot);
}

/**
 * Runs `ops` alternately through two tier services on one PostgreSQL database (two servers), each op's
 * result checked against the one model and the invariants checked through the server that did not run it.
 * Counters count per server, so they are not compared; everything else must be as on one server.
 */
async function runOnTwo(url: string, budgets: TierBudgets, ops: TierOp[], through: boolean[]): Promise<void> {
  const pools = [openPostgresPool(url), openPostgresPool(url)];
  const servers = [
    await TierService.open(new PostgresTierStore(pools[0]), { budgets, summaryTokens: 8 }),
    await TierService.open(new PostgresTierStore(pools[1]), { budgets, summaryTokens: 8 }),
  ];
  try {
    const model = new TierModel(budgets);
    for (const [i, op] of ops.entries()) {
      const s = through[i % through.length] ? 1 : 0;
      const expected = model.apply(op);
      expect({ op, outcome: await run(servers[s], op) }).toEqual({ op, outcome: expected });
      await checkInvariants(servers[1 - s], model, budgets, undefined, true);
    }
  } finally {
    for (const t of servers) await t.close();
    for (const p of pools) await p.end();
  }
}

async function runSequence(store: TierStore, budgets: TierBudgets, ops: TierOp[]): Promise<{ tiers: TierService; model: TierModel }> {
  const tiers = await TierService.open(store, { budgets, summaryTokens: 8 });
  const model = new TierModel(budgets);
  for (const op of ops) {
    const expected = model.apply(op);
    expect({ op, outcome: await run(tiers, op) }).toEqual({ op, outcome: expected });
    await checkInvariants(tiers, model, budgets, store);
  }
  return { tiers, model };
}

// Sequence counts sized for CI (each run draws a fresh seed, so runs add up): every invariant is checked after
// every operation of sequences up to 40 long, which is where the cost is; 2,000 and 150 sequences took 50 s.
describe("random sequences of store, get, promote, demote and evict keep every invariant", () => {
  test("in-memory store: 400 sequences", async () => {
    await fc.assert(
      fc.asyncProperty(budgetsArb, fc.array(opArb, { minLength: 1, maxLength: 40 }), async (budgets, ops) => {
        await runSequence(new MemoryTierStore(), budgets, ops);
      }),
      { numRuns: 400 },
    );
  }, 120_000);

  test("SQLite and cold files: 50 sequences, each followed by a restart that finds every fragment where it was", async () => {
    const root = mkdtempSync(join(tmpdir(), "acms-tier-prop-"));
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(budgetsArb, fc.array(opArb, { minLength: 1, maxLength: 30 }), async (budgets, ops) => {
          const dir = join(root, String(n++));
          mkdirSync(dir);
          // A file, so its WAL is synced in groups (an in-memory database has none) and the deferred unlinks run.
          const db = openSqliteDatabase(join(dir, "acms.db"));
          const { tiers, model } = await runSequence(new SqliteFileTierStore(db, join(dir, "cold")), budgets, ops);
          await tiers.close();
          const reopened = await TierService.open(new SqliteFileTierStore(db, join(dir, "cold")), { budgets, summaryTokens: 8 });
          await checkInvariants(reopened, model, budgets, undefined, true);
          for (const principal of PRINCIPALS) {
            const full = await reopened.getForActor(FULL[principal], "strategist", [], true);
            for (const f of full) expect(f.content).toBe(content(f.tokenCount, principal));
          }
          // Exactly one cold file per cold fragment of either principal: no copy left behind by a move.
          expect(readdirSync(join(dir, "cold")).length).toBe(model.size("cold"));
          await reopened.close();
          db.close();
        }),
        { numRuns: 50 },
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);

  test("PostgreSQL, two servers on one database: 15 sequences, each operation through either, seen through the other", async () => {
    const db = await openTestPostgres();
    try {
      await fc.assert(
        fc.asyncProperty(
          budgetsArb,
          fc.array(opArb, { minLength: 1, maxLength: 25 }),
          fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
          async (budgets, ops, through) => {
            await db.pool.query("TRUNCATE tier_fragments, tier_removals");
            await runOnTwo(db.url, budgets, ops, through);
          },
        ),
        { numRuns: 15 },
      );
    } finally {
      await db.close();
    }
  }, 180_000);
});
