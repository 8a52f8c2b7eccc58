import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { MemoryTierStore } from "../../src/adapters/memory/memory-tier-store.js";
import { openSqliteCatalog } from "../../src/adapters/sqlite/index.js";
import { SqliteFileTierStore } from "../../src/adapters/sqlite/sqlite-file-tier-store.js";
import {
  AlreadyExistsError,
  FailedPreconditionError,
  InvalidArgumentError,
  NotFoundError,
  ScopeViolationError,
} from "../../src/domain/errors.js";
import { LruTierPolicy, type TierBudgets, type TierEntry } from "../../src/domain/tier-policy.js";
import { fragmentKey, type TierName } from "../../src/domain/tier-fragment.js";
import { countTokens } from "../../src/domain/token-count.js";
import { isUlid, newUlid } from "../../src/domain/ulid-id.js";
import { TierService, type FragmentInput } from "../../src/application/tiers/tier-service.js";
import { prose, scopeView } from "./tier-fixtures.js";

const R1 = newUlid();
const R2 = newUlid();
const view = scopeView(["local/api", "local/web"], [R1]);
const apiOnly = scopeView(["local/api"], [R1]);
/** The same principal as `view`, in a scope of another project: within one principal, scopes still isolate. */
const other = scopeView(["other/x"], [R2]);
/** Another principal over the same projects and resources as `view`: a separate fragment id namespace. */
const stranger = scopeView(["local/api", "local/web"], [R1], "stranger");

const BUDGETS: TierBudgets = { maxTokensHot: 60, maxDecisionsWarm: 3, maxDecisionsCold: 3 };

async function open(budgets: TierBudgets = BUDGETS, store = new MemoryTierStore(), summaryTokens = 16) {
  const tiers = await TierService.open(store, { budgets, summaryTokens });
  return { tiers, store };
}

function input(over: Partial<FragmentInput> = {}): FragmentInput {
  return { id: "", content: "a small note", tier: undefined, projectName: "local/api", resourceId: "", metadata: {}, ...over };
}

/** `n` tokens of content (each " w" is one token). */
function tokens(n: number): string {
  return "w".concat(" w".repeat(n - 1));
}

async function fieldOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return (err as InvalidArgumentError).violations[0].field;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

async function rejects(p: () => Promise<unknown>, type: new (...args: never[]) => Error): Promise<Error> {
  try {
    await p();
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as Error;
  }
  throw new Error(`expected ${type.name}`);
}

test("tokens() makes exactly n tokens", () => {
  expect(countTokens(tokens(1))).toBe(1);
  expect(countTokens(tokens(25))).toBe(25);
});

describe("StoreFragment", () => {
  test("defaults to hot, assigns a ULID, counts tokens, fills timestamps", async () => {
    const { tiers } = await open();
    const { fragment, displaced } = await tiers.storeFragment(view, input({ metadata: { k: "v" } }));
    expect(isUlid(fragment.id)).toBe(true);
    expect(fragment.tier).toBe("hot");
    expect(fragment.tokenCount).toBe(countTokens("a small note"));
    expect(fragment.createdAt.getTime()).toBeGreaterThan(0);
    expect(fragment.lastAccessedAt).toEqual(fragment.updatedAt);
    expect(fragment.metadata).toEqual({ k: "v" });
    expect(fragment.summary).toBe("");
    expect(displaced).toEqual([]);
  });

  test("refuses bad input with the field named", async () => {
    const { tiers } = await open();
    expect(await fieldOf(() => tiers.storeFragment(view, input({ projectName: "" })))).toBe("fragment.project_name");
    expect(await fieldOf(() => tiers.storeFragment(view, input({ projectName: "Bad Name" })))).toBe("fragment.project_name");
    expect(await fieldOf(() => tiers.storeFragment(view, input({ id: "has space" })))).toBe("fragment.fragment_id");
    expect(await fieldOf(() => tiers.storeFragment(view, input({ id: "x".repeat(129) })))).toBe("fragment.fragment_id");
    expect(await fieldOf(() => tiers.storeFragment(view, input({ content: "  \n " })))).toBe("fragment.content");
    expect(await fieldOf(() => tiers.storeFragment(view, input({ content: "x".repeat(256 * 1024 + 1), tier: "cold" })))).toBe(
      "fragment.content",
    );
    expect(await fieldOf(() => tiers.storeFragment(view, input({ resourceId: "not-a-ulid" })))).toBe("fragment.resource_id");
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"]));
    expect(await fieldOf(() => tiers.storeFragment(view, input({ metadata: many })))).toBe("fragment.metadata");
    expect((await tiers.getMetrics(view)).population.hot).toBe(0);
  });

  test("a project or resource outside the scope is a ScopeViolation naming it", async () => {
    const { tiers } = await open();
    const a = (await rejects(
      () => tiers.storeFragment(apiOnly, input({ projectName: "local/web" })),
      ScopeViolationError,
    )) as ScopeViolationError;
    expect(a.info.projectNames).toEqual(["local/web"]);
    expect(a.info.scopeProjectNames).toEqual(["local/api"]);
    const b = (await rejects(() => tiers.storeFragment(view, input({ resourceId: R2 })), ScopeViolationError)) as ScopeViolationError;
    expect(b.info.resourceIds).toEqual([R2]);
  });

  test("a fragment larger than the whole hot budget is refused into hot, accepted into warm, never promoted to hot", async () => {
    const { tiers } = await open();
    expect(await fieldOf(() => tiers.storeFragment(view, input({ content: tokens(61) })))).toBe("fragment.content");
    const { fragment } = await tiers.storeFragment(view, input({ content: tokens(61), tier: "warm" }));
    expect(fragment.tier).toBe("warm");
    const err = await rejects(() => tiers.promoteFragment(view, fragment.id), FailedPreconditionError);
    expect(err.message).toMatch(/more than the whole hot budget/);
    expect((await tiers.getFragment(view, fragment.id)).tier).toBe("warm");
  });

  test("over budget, least recently used fragments move down one tier and cold overflow deletes them", async () => {
    const { tiers } = await open({ maxTokensHot: 50, maxDecisionsWarm: 1, maxDecisionsCold: 1 });
    const a = await tiers.storeFragment(view, input({ id: "a", content: tokens(20) }));
    const b = await tiers.storeFragment(view, input({ id: "b", content: tokens(20) }));
    expect(a.displaced).toEqual([]);
    expect(b.displaced).toEqual([]);
    const c = await tiers.storeFragment(view, input({ id: "c", content: tokens(20) }));
    expect(c.displaced).toEqual([{ id: "a", from: "hot", to: "warm", evicted: false }]);
    const d = await tiers.storeFragment(view, input({ id: "d", content: tokens(20) }));
    expect(d.displaced).toEqual([
      { id: "b", from: "hot", to: "warm", evicted: false },
      { id: "a", from: "warm", to: "cold", evicted: false },
    ]);
    const e = await tiers.storeFragment(view, input({ id: "e", content: tokens(20) }));
    expect(e.displaced).toEqual([
      { id: "c", from: "hot", to: "warm", evicted: false },
      { id: "b", from: "warm", to: "cold", evicted: false },
      { id: "a", from: "cold", to: undefined, evicted: true },
    ]);
    const m = await tiers.getMetrics(view);
    expect(m.population).toEqual({ hot: 2, warm: 1, cold: 1 });
    expect(m.tokens.hot).toBe(40);
    expect(m.demotions).toBe(5);
    expect(m.evictions).toBe(1);
    await rejects(() => tiers.getFragment(view, "a"), NotFoundError);
  });

  test("budgets are per principal and project: another tenant's fragment is never displaced, and displaced lists the caller's", async () => {
    const { tiers } = await open({ maxTokensHot: 50, maxDecisionsWarm: 5, maxDecisionsCold: 5 });
    await tiers.storeFragment(other, input({ id: "theirs", projectName: "other/x", content: tokens(20) }));
    await tiers.storeFragment(view, input({ id: "mine", content: tokens(20) }));
    const third = await tiers.storeFragment(view, input({ id: "new", content: tokens(20) }));
    expect(third.displaced).toEqual([]);
    // Was "warm" while budgets were per deployment: the caller's stores pushed the other tenant's fragment down.
    expect((await tiers.getFragment(other, "theirs")).tier).toBe("hot");
    const fourth = await tiers.storeFragment(view, input({ id: "newer", content: tokens(20) }));
    expect(fourth.displaced).toEqual([{ id: "mine", from: "hot", to: "warm", evicted: false }]);
  });

  test("a read makes a fragment recently used, so another one is displaced first", async () => {
    const { tiers } = await open({ maxTokensHot: 50, maxDecisionsWarm: 5, maxDecisionsCold: 5 });
    await tiers.storeFragment(view, input({ id: "a", content: tokens(20) }));
    await tiers.storeFragment(view, input({ id: "b", content: tokens(20) }));
    await tiers.getFragment(view, "a");
    const c = await tiers.storeFragment(view, input({ id: "c", content: tokens(20) }));
    expect(c.displaced.map((d) => d.id)).toEqual(["b"]);
  });

  test("storing an existing id replaces it: same fragment, new content and tier, creation time kept", async () => {
    const { tiers, store } = await open();
    const first = await tiers.storeFragment(view, input({ id: "plan:1", content: "first version" }));
    const second = await tiers.storeFragment(view, input({ id: "plan:1", content: prose(10), tier: "cold", metadata: { v: "2" } }));
    expect(second.fragment.createdAt).toEqual(first.fragment.createdAt);
    expect(second.fragment.tier).toBe("cold");
    expect(second.fragment.summary.length).toBeGreaterThan(0);
    expect(store.tiersOf("test")).toEqual(new Map([["plan:1", "cold"]]));
    const got = await tiers.getFragment(view, "plan:1");
    expect(got.content).toBe(prose(10));
    expect(got.metadata).toEqual({ v: "2" });
    expect((await tiers.getMetrics(view)).population).toEqual({ hot: 0, warm: 0, cold: 1 });
  });

  test("an id held by one of the principal's own fragments outside the scope is ALREADY_EXISTS and the fragment is untouched", async () => {
    const { tiers } = await open();
    await tiers.storeFragment(other, input({ id: "shared", projectName: "other/x", content: "theirs" }));
    await rejects(() => tiers.storeFragment(view, input({ id: "shared", content: "mine" })), AlreadyExistsError);
    expect((await tiers.getFragment(other, "shared")).content).toBe("theirs");
  });
});

describe("a fragment with an empty project_name", () => {
  test("is never visible, even when the store holds one (written before project_name was required)", async () => {
    const store = new MemoryTierStore();
    const now = new Date();
    for (const [i, tier] of (["hot", "warm", "cold"] as const).entries()) {
      await store.save({
        owner: "test",
        id: `orphan-${tier}`,
        tier,
        projectName: "",
        resourceId: "",
        metadata: {},
        content: "no project at all",
        summary: tier === "cold" ? "no project" : "",
        tokenCount: 4,
        createdAt: now,
        updatedAt: now,
        lastAccessedAt: now,
        accessSeq: i + 1,
      });
    }
    const { tiers } = await open(BUDGETS, store);
    for (const tier of ["hot", "warm", "cold"] as const) {
      await rejects(() => tiers.getFragment(view, `orphan-${tier}`), NotFoundError);
      await rejects(() => tiers.promoteFragment(view, `orphan-${tier}`), NotFoundError);
      await rejects(() => tiers.demoteFragment(view, `orphan-${tier}`), NotFoundError);
      expect(await tiers.evictLru(view, tier, 10)).toEqual([]);
    }
    expect(await tiers.getForActor(view, "strategist", [], true)).toEqual([]);
    expect((await tiers.getMetrics(view)).population).toEqual({ hot: 0, warm: 0, cold: 0 });
    // Still held, untouched: invisible, not deleted.
    expect(tiers.totals().population).toEqual({ hot: 1, warm: 1, cold: 1 });
  });
});

describe("fragment ids are namespaced per principal", () => {
  test("two principals store the same id independently, even over the same projects and resources", async () => {
    const { tiers, store } = await open();
    const mine = await tiers.storeFragment(view, input({ id: "plan-1", content: "my plan", resourceId: R1 }));
    const theirs = await tiers.storeFragment(stranger, input({ id: "plan-1", content: "their plan", tier: "cold" }));
    expect(mine.fragment.id).toBe("plan-1");
    expect(theirs.fragment.id).toBe("plan-1");
    expect(store.tiersOf("test")).toEqual(new Map([["plan-1", "hot"]]));
    expect(store.tiersOf("stranger")).toEqual(new Map([["plan-1", "cold"]]));
    expect((await tiers.getFragment(view, "plan-1")).content).toBe("my plan");
    expect((await tiers.getFragment(stranger, "plan-1")).content).toBe("their plan");
    // Replacing one principal's fragment keeps the other's as it was.
    await tiers.storeFragment(stranger, input({ id: "plan-1", content: "their plan, v2", tier: "warm" }));
    const again = await tiers.getFragment(view, "plan-1");
    expect([again.content, again.tier, again.createdAt]).toEqual(["my plan", "hot", mine.fragment.createdAt]);
  });

  test("whether another principal holds an id never changes an answer: store, get, promote, demote", async () => {
    const { tiers } = await open();
    await tiers.storeFragment(stranger, input({ id: "taken", content: "their plan", tier: "warm" }));
    // Every call on "taken" answers exactly as on "fresh", which nobody holds.
    for (const id of ["taken", "fresh"]) {
      const err = await rejects(() => tiers.getFragment(view, id), NotFoundError);
      expect(err.message).toBe(`fragment ${id} not found`);
      await rejects(() => tiers.promoteFragment(view, id), NotFoundError);
      await rejects(() => tiers.demoteFragment(view, id), NotFoundError);
      const stored = await tiers.storeFragment(view, input({ id, content: `my ${id}`, tier: "warm" }));
      expect(stored.fragment.tier).toBe("warm");
      expect((await tiers.promoteFragment(view, id)).fragment.tier).toBe("hot");
      expect((await tiers.demoteFragment(view, id)).fragment.tier).toBe("warm");
    }
    const theirs = await tiers.getFragment(stranger, "taken");
    expect([theirs.content, theirs.tier]).toEqual(["their plan", "warm"]);
  });

  test("EvictLru, GetForActor and GetMetrics only ever see the caller's principal's fragments", async () => {
    const { tiers } = await open();
    await tiers.storeFragment(view, input({ id: "same", content: tokens(3) }));
    await tiers.storeFragment(stranger, input({ id: "same", content: tokens(5) }));
    await tiers.storeFragment(stranger, input({ id: "only-theirs", content: tokens(7) }));
    const listed = await tiers.getForActor(view, "strategist", [], true);
    expect(listed.map((f) => [f.id, f.content])).toEqual([["same", tokens(3)]]);
    expect((await tiers.getMetrics(view)).tokens.hot).toBe(3);
    expect((await tiers.getMetrics(stranger)).tokens.hot).toBe(12);
    expect(await tiers.evictLru(view, "hot", 10)).toEqual(["same"]);
    expect((await tiers.getForActor(stranger, "reviewer", [], false)).map((f) => f.id).sort()).toEqual(["only-theirs", "same"]);
    expect((await tiers.getFragment(view, "same")).tier).toBe("warm");
  });

  test("displacement never crosses principals, even over the same project, and names only the caller's", async () => {
    const { tiers } = await open({ maxTokensHot: 50, maxDecisionsWarm: 5, maxDecisionsCold: 5 });
    await tiers.storeFragment(stranger, input({ id: "x", content: tokens(20) }));
    await tiers.storeFragment(view, input({ id: "x", content: tokens(20) }));
    const third = await tiers.storeFragment(view, input({ id: "y", content: tokens(20) }));
    expect(third.displaced).toEqual([]);
    // Was "warm" while budgets were per deployment; each principal's project now has its own budget.
    expect((await tiers.getFragment(stranger, "x")).tier).toBe("hot");
    expect((await tiers.getFragment(view, "x")).tier).toBe("hot");
    const fourth = await tiers.storeFragment(stranger, input({ id: "z", content: tokens(20) }));
    expect(fourth.displaced).toEqual([]);
    expect((await tiers.getFragment(view, "x")).tier).toBe("hot");
    // Was "warm" (the stranger's store pushed it down): now untouched by another principal.
    expect((await tiers.getFragment(view, "y")).tier).toBe("hot");
    // The caller's own pool still overflows on its own: its least recently used fragment goes down.
    const fifth = await tiers.storeFragment(view, input({ id: "w", content: tokens(20) }));
    expect(fifth.displaced).toEqual([{ id: "x", from: "hot", to: "warm", evicted: false }]);
    expect((await tiers.getFragment(stranger, "x")).tier).toBe("hot");
  });

  test("one tenant storing many fragments in its own project never demotes or deletes another tenant's acknowledged fragment", async () => {
    const { tiers } = await open({ maxTokensHot: 50, maxDecisionsWarm: 2, maxDecisionsCold: 2 });
    const kept = await tiers.storeFragment(other, input({ id: "b-plan", projectName: "other/x", content: tokens(10) }));
    for (let i = 0; i < 40; i++) await tiers.storeFragment(view, input({ id: `a-${i}`, content: tokens(20) }));
    for (let i = 0; i < 10; i++) await tiers.storeFragment(stranger, input({ id: `s-${i}`, content: tokens(20), tier: "cold" }));
    const got = await tiers.getFragment(other, "b-plan");
    expect([got.tier, got.content]).toEqual(["hot", kept.fragment.content]);
    // The flooding tenant's own pool kept its budgets (2 hot, 2 warm, 2 cold of 20 tokens each).
    expect((await tiers.getMetrics(view)).population).toEqual({ hot: 2, warm: 2, cold: 2 });
  });
});

describe("GetFragment", () => {
  test("counts hits per tier and misses through the tiers", async () => {
    const { tiers } = await open();
    await tiers.storeFragment(view, input({ id: "h" }));
    await tiers.storeFragment(view, input({ id: "w", tier: "warm" }));
    await tiers.storeFragment(view, input({ id: "c", tier: "cold" }));
    await tiers.storeFragment(other, input({ id: "x", projectName: "other/x" }));
    await tiers.getFragment(view, "h");
    await tiers.getFragment(view, "h");
    await tiers.getFragment(view, "w");
    await tiers.getFragment(view, "c");
    await rejects(() => tiers.getFragment(view, "missing"), NotFoundError);
    const err = await rejects(() => tiers.getFragment(view, "x"), NotFoundError);
    expect(err.message).toBe("fragment x not found");
    const m = await tiers.getMetrics(view);
    expect(m).toMatchObject({ hotHits: 2, hotMisses: 4, warmHits: 1, warmMisses: 3, coldHits: 1, misses: 2 });
  });

  test("returns full content for cold fragments, with the summary alongside", async () => {
    const { tiers } = await open();
    const text = prose(30);
    await tiers.storeFragment(view, input({ id: "c", tier: "cold", content: text }));
    const got = await tiers.getFragment(view, "c");
    expect(got.content).toBe(text);
    expect(countTokens(got.summary)).toBeLessThanOrEqual(16);
    expect(got.summary.length).toBeGreaterThan(0);
  });

  test("an empty or malformed id is INVALID_ARGUMENT fragment_id", async () => {
    const { tiers } = await open();
    expect(await fieldOf(() => tiers.getFragment(view, ""))).toBe("fragment_id");
    expect(await fieldOf(() => tiers.promoteFragment(view, "a/b"))).toBe("fragment_id");
  });
});

describe("PromoteFragment and DemoteFragment", () => {
  test("move one step; into cold a summary is made, out of cold it is dropped and the original returns", async () => {
    const { tiers } = await open({ maxTokensHot: 1000, maxDecisionsWarm: 5, maxDecisionsCold: 5 });
    const text = prose(20);
    await tiers.storeFragment(view, input({ id: "f", content: text }));
    expect((await tiers.demoteFragment(view, "f")).fragment.tier).toBe("warm");
    const cold = (await tiers.demoteFragment(view, "f")).fragment;
    expect(cold.tier).toBe("cold");
    expect(countTokens(cold.summary)).toBeLessThanOrEqual(16);
    expect(cold.summary.length).toBeGreaterThan(0);
    await rejects(() => tiers.demoteFragment(view, "f"), FailedPreconditionError);
    const warm = (await tiers.promoteFragment(view, "f")).fragment;
    expect(warm.tier).toBe("warm");
    expect(warm.summary).toBe("");
    expect(warm.content).toBe(text);
    expect((await tiers.promoteFragment(view, "f")).fragment.tier).toBe("hot");
    const err = await rejects(() => tiers.promoteFragment(view, "f"), FailedPreconditionError);
    expect(err.message).toMatch(/already in hot/);
    const m = await tiers.getMetrics(view);
    expect([m.promotions, m.demotions]).toEqual([2, 2]);
  });

  test("promotion into a full tier makes room by moving its LRU down", async () => {
    const { tiers } = await open({ maxTokensHot: 30, maxDecisionsWarm: 5, maxDecisionsCold: 5 });
    await tiers.storeFragment(view, input({ id: "w", content: tokens(20), tier: "warm" }));
    await tiers.storeFragment(view, input({ id: "h", content: tokens(20) }));
    const { fragment, displaced } = await tiers.promoteFragment(view, "w");
    expect(fragment.tier).toBe("hot");
    expect(displaced).toEqual([{ id: "h", from: "hot", to: "warm", evicted: false }]);
  });

  test("a fragment outside the scope is NOT_FOUND", async () => {
    const { tiers } = await open();
    await tiers.storeFragment(other, input({ id: "x", projectName: "other/x", tier: "warm" }));
    await rejects(() => tiers.promoteFragment(view, "x"), NotFoundError);
    await rejects(() => tiers.demoteFragment(view, "x"), NotFoundError);
    expect((await tiers.getFragment(other, "x")).tier).toBe("warm");
  });
});

describe("EvictLru", () => {
  test("from hot moves exactly the count least recently used one tier down; from cold deletes", async () => {
    const { tiers } = await open({ maxTokensHot: 1000, maxDecisionsWarm: 10, maxDecisionsCold: 10 });
    for (const id of ["a", "b", "c", "d"]) await tiers.storeFragment(view, input({ id }));
    await tiers.getFragment(view, "a");
    expect(await tiers.evictLru(view, "hot", 2)).toEqual(["b", "c"]);
    expect((await tiers.getFragment(view, "b")).tier).toBe("warm");
    expect((await tiers.getFragment(view, "a")).tier).toBe("hot");
    await tiers.demoteFragment(view, "b");
    await tiers.demoteFragment(view, "c");
    expect(await tiers.evictLru(view, "cold", 5)).toEqual(["b", "c"]);
    const m = await tiers.getMetrics(view);
    expect(m.evictions).toBe(2);
    expect(m.population).toEqual({ hot: 2, warm: 0, cold: 0 });
  });

  test("only fragments visible in the call's scope are candidates", async () => {
    const { tiers } = await open({ maxTokensHot: 1000, maxDecisionsWarm: 10, maxDecisionsCold: 10 });
    await tiers.storeFragment(other, input({ id: "theirs", projectName: "other/x", tier: "cold" }));
    await tiers.storeFragment(view, input({ id: "mine", tier: "cold" }));
    expect(await tiers.evictLru(view, "cold", 10)).toEqual(["mine"]);
    expect((await tiers.getFragment(other, "theirs")).tier).toBe("cold");
  });

  test("count must be greater than 0", async () => {
    const { tiers } = await open();
    expect(await fieldOf(() => tiers.evictLru(view, "hot", 0))).toBe("count");
  });
});

describe("GetForActor", () => {
  async function filled() {
    const o = await open({ maxTokensHot: 1000, maxDecisionsWarm: 10, maxDecisionsCold: 10 });
    const t = o.tiers;
    await t.storeFragment(view, input({ id: "h1" }));
    await t.storeFragment(view, input({ id: "h2", projectName: "local/web" }));
    await t.storeFragment(view, input({ id: "w1", tier: "warm", content: "warm note" }));
    await t.storeFragment(view, input({ id: "w2", tier: "warm", resourceId: R1 }));
    await t.storeFragment(view, input({ id: "c1", tier: "cold", content: prose(30) }));
    await t.storeFragment(other, input({ id: "x", projectName: "other/x" }));
    return t;
  }

  test("roles see their tiers, hot then warm then cold, most recently used first", async () => {
    const t = await filled();
    await t.getFragment(view, "w1");
    const ids = async (role: "strategist" | "executor" | "reviewer") => (await t.getForActor(view, role, [], false)).map((f) => f.id);
    expect(await ids("strategist")).toEqual(["h2", "h1", "w1", "w2", "c1"]);
    expect(await ids("executor")).toEqual(["h2", "h1", "w1", "w2"]);
    expect(await ids("reviewer")).toEqual(["h2", "h1"]);
  });

  test("cold fragments show their summary unless the full content is asked for", async () => {
    const t = await filled();
    const summarised = (await t.getForActor(view, "strategist", [], false)).find((f) => f.id === "c1")!;
    expect(summarised.content).toBe(summarised.summary);
    expect(countTokens(summarised.content)).toBeLessThanOrEqual(16);
    const full = (await t.getForActor(view, "strategist", [], true)).find((f) => f.id === "c1")!;
    expect(full.content).toBe(prose(30));
    expect((await t.getForActor(view, "executor", [], false)).find((f) => f.id === "w1")!.content).toBe("warm note");
  });

  test("project_names narrows to those projects; resources outside the scope stay hidden", async () => {
    const t = await filled();
    expect((await t.getForActor(view, "strategist", ["local/web"], false)).map((f) => f.id)).toEqual(["h2"]);
    const narrow = scopeView(["local/api"]);
    expect((await t.getForActor(narrow, "strategist", [], false)).map((f) => f.id)).toEqual(["h1", "w1", "c1"]);
    expect((await t.getForActor(other, "strategist", [], false)).map((f) => f.id)).toEqual(["x"]);
  });

  test("a project outside the scope is a ScopeViolation; a malformed one INVALID_ARGUMENT", async () => {
    const t = await filled();
    const err = (await rejects(() => t.getForActor(apiOnly, "reviewer", ["local/web"], false), ScopeViolationError)) as ScopeViolationError;
    expect(err.info.projectNames).toEqual(["local/web"]);
    expect(await fieldOf(() => t.getForActor(view, "reviewer", ["nope"], false))).toBe("project_names[0]");
  });

  test("reading a view does not change the LRU order", async () => {
    const t = await filled();
    const before = (await t.getForActor(view, "strategist", [], false)).map((f) => f.id);
    await t.getForActor(view, "strategist", ["local/api"], true);
    expect((await t.getForActor(view, "strategist", [], false)).map((f) => f.id)).toEqual(before);
  });
});

describe("GetMetrics", () => {
  test("population and tokens count only fragments visible in the scope", async () => {
    const { tiers } = await open();
    await tiers.storeFragment(view, input({ id: "a", content: tokens(5) }));
    await tiers.storeFragment(other, input({ id: "b", projectName: "other/x", content: tokens(7) }));
    expect((await tiers.getMetrics(view)).tokens.hot).toBe(5);
    expect((await tiers.getMetrics(other)).tokens.hot).toBe(7);
    expect(tiers.totals().tokens.hot).toBe(12);
  });

  test("counters count only the caller's projects: no figure moves because of another tenant or project", async () => {
    // Cold holds all that overflows (nothing deleted before the lookups, so every lookup below is a hit).
    const { tiers } = await open({ maxTokensHot: 20, maxDecisionsWarm: 1, maxDecisionsCold: 10 });
    await tiers.storeFragment(view, input({ id: "mine", content: tokens(5) }));
    await tiers.getFragment(view, "mine");
    await rejects(() => tiers.getFragment(view, "nothing"), NotFoundError);
    const mine = await tiers.getMetrics(view);
    const mineApi = await tiers.getMetrics(apiOnly);
    expect([mine.hotHits, mine.hotMisses, mine.misses]).toEqual([1, 1, 1]);
    // Another principal over the same projects, and another project of the same principal, each busy.
    for (const busy of [stranger, other]) {
      const projectName = busy === other ? "other/x" : "local/api";
      for (let i = 0; i < 6; i++) await tiers.storeFragment(busy, input({ id: `f${i}`, projectName, content: tokens(8) }));
      for (let i = 0; i < 6; i++) await tiers.getFragment(busy, `f${i}`).catch(() => undefined);
      // A lookup that finds nothing belongs to no project: it counts under the scope it was asked in only
      // ("test" owns `other` too, and `view`'s miss above is not `other`'s).
      if (busy === stranger) await tiers.getFragment(busy, "nothing").catch(() => undefined);
      await tiers.promoteFragment(busy, "f0").catch(() => undefined);
      await tiers.demoteFragment(busy, "f5").catch(() => undefined);
      await tiers.evictLru(busy, "cold", 5);
      const theirs = await tiers.getMetrics(busy);
      expect(theirs.hotHits + theirs.warmHits + theirs.coldHits + theirs.misses).toBe(busy === stranger ? 7 : 6);
      expect(theirs.demotions).toBeGreaterThan(0);
      expect(theirs.evictions).toBeGreaterThan(0);
    }
    expect(await tiers.getMetrics(view)).toEqual(mine);
    expect(await tiers.getMetrics(apiOnly)).toEqual(mineApi);
  });

  test("a narrower scope of the same principal sums only its projects' hits", async () => {
    const { tiers } = await open();
    await tiers.storeFragment(view, input({ id: "api", content: tokens(3) }));
    await tiers.storeFragment(view, input({ id: "web", projectName: "local/web", content: tokens(3) }));
    await tiers.getFragment(view, "api");
    await tiers.getFragment(view, "web");
    await tiers.getFragment(view, "web");
    expect((await tiers.getMetrics(view)).hotHits).toBe(3);
    expect((await tiers.getMetrics(apiOnly)).hotHits).toBe(1);
  });
});

describe("an injected placement policy", () => {
  /** Gives up the most recently used fragment first: the opposite of the default. */
  class NewestFirstPolicy extends LruTierPolicy {
    override evictionOrder(tier: TierName): IterableIterator<TierEntry> {
      return [...super.evictionOrder(tier)].reverse().values();
    }
  }

  test("is asked for every placement, and decides which fragments EvictLru gives up", async () => {
    const made: TierBudgets[] = [];
    const tiers = await TierService.open(new MemoryTierStore(), {
      budgets: { maxTokensHot: 1000, maxDecisionsWarm: 10, maxDecisionsCold: 10 },
      summaryTokens: 8,
      policy: (budgets) => {
        made.push(budgets);
        return new NewestFirstPolicy(budgets);
      },
    });
    expect(made).toEqual([{ maxTokensHot: 1000, maxDecisionsWarm: 10, maxDecisionsCold: 10 }]);
    for (const id of ["a", "b", "c", "d"]) await tiers.storeFragment(view, input({ id }));
    expect(await tiers.evictLru(view, "hot", 2)).toEqual(["d", "c"]);
    expect((await tiers.getFragment(view, "d")).tier).toBe("warm");
    expect((await tiers.getFragment(view, "a")).tier).toBe("hot");
  });
});

describe("capacity isolation of the tier reads", () => {
  /** Counts the entries each call reads from the policy, by pool. */
  class CountingPolicy extends LruTierPolicy {
    readonly read = new Map<string, number>();
    override evictionOrder(tier: TierName, pool?: string): IterableIterator<TierEntry> {
      const read = this.read;
      const inner = super.evictionOrder(tier, pool);
      return (function* () {
        for (const e of inner) {
          read.set(e.pool, (read.get(e.pool) ?? 0) + 1);
          yield e;
        }
      })();
    }
  }

  test("GetForActor, GetMetrics and EvictLru read only the caller's own pools, however much others hold", async () => {
    let policy!: CountingPolicy;
    const tiers = await TierService.open(new MemoryTierStore(), {
      budgets: { maxTokensHot: 10_000, maxDecisionsWarm: 1000, maxDecisionsCold: 1000 },
      summaryTokens: 8,
      policy: (budgets) => (policy = new CountingPolicy(budgets)),
    });
    const other = scopeView(["local/api"], [], "someone-else");
    for (let i = 0; i < 60; i++) await tiers.storeFragment(other, input({ id: `o${i}`, tier: (["hot", "warm", "cold"] as const)[i % 3] }));
    const mine = scopeView(["local/api", "local/web"], [], "me");
    await tiers.storeFragment(mine, input({ id: "m1" }));
    await tiers.storeFragment(mine, input({ id: "m2", projectName: "local/web", tier: "warm" }));
    await tiers.storeFragment(mine, input({ id: "m3", tier: "warm" }));
    policy.read.clear();
    expect((await tiers.getForActor(mine, "strategist", [], false)).map((f) => f.id)).toEqual(["m1", "m3", "m2"]);
    expect((await tiers.getMetrics(mine)).population).toEqual({ hot: 1, warm: 2, cold: 0 });
    // Over both projects, the least recently used first: m2 was stored before m3.
    expect(await tiers.evictLru(mine, "warm", 1)).toEqual(["m2"]);
    expect([...policy.read.keys()].sort()).toEqual([fragmentKey("me", "local/api"), fragmentKey("me", "local/web")]);
  });
});

describe("summariser and start-up", () => {
  test("a pluggable summariser is used, and an answer over the target is trimmed to it", async () => {
    const calls: number[] = [];
    const tiers = await TierService.open(new MemoryTierStore(), {
      budgets: BUDGETS,
      summaryTokens: 8,
      summarise: async (content, target) => {
        calls.push(target);
        return `SUMMARY ${content}`;
      },
    });
    const { fragment } = await tiers.storeFragment(view, input({ tier: "cold", content: prose(5) }));
    expect(calls).toEqual([8]);
    expect(fragment.summary.startsWith("SUMMARY")).toBe(true);
    expect(countTokens(fragment.summary)).toBeLessThanOrEqual(8);
  });

  test("opening over a store that exceeds smaller budgets brings every tier back within them", async () => {
    const store = new MemoryTierStore();
    const first = await TierService.open(store, {
      budgets: { maxTokensHot: 1000, maxDecisionsWarm: 10, maxDecisionsCold: 10 },
      summaryTokens: 8,
    });
    for (let i = 0; i < 6; i++) await first.storeFragment(view, input({ id: `f${i}`, content: tokens(10) }));
    const second = await TierService.open(store, {
      budgets: { maxTokensHot: 25, maxDecisionsWarm: 2, maxDecisionsCold: 1 },
      summaryTokens: 8,
    });
    expect(second.totals().population).toEqual({ hot: 2, warm: 2, cold: 1 });
    expect((await second.getForActor(view, "strategist", [], false)).map((f) => f.id)).toEqual(["f5", "f4", "f3", "f2", "f1"]);
  });
});

describe("concurrency", () => {
  test("concurrent calls keep every fragment in exactly one tier and every budget held", async () => {
    const { tiers, store } = await open({ maxTokensHot: 100, maxDecisionsWarm: 8, maxDecisionsCold: 8 });
    const ops: Array<Promise<unknown>> = [];
    for (let i = 0; i < 300; i++) {
      const id = `f${i % 25}`;
      const k = i % 5;
      const op =
        k === 0
          ? tiers.storeFragment(view, input({ id, content: tokens(1 + (i % 30)) }))
          : k === 1
            ? tiers.getFragment(view, id)
            : k === 2
              ? tiers.promoteFragment(view, id)
              : k === 3
                ? tiers.demoteFragment(view, id)
                : tiers.evictLru(view, (["hot", "warm", "cold"] as const)[i % 3], 1);
      ops.push(
        op.catch((err: unknown) => {
          if (!(err instanceof NotFoundError || err instanceof FailedPreconditionError)) throw err;
        }),
      );
    }
    await Promise.all(ops);
    const listed = await tiers.getForActor(view, "strategist", [], false);
    const stored = store.tiersOf("test");
    expect(new Set(listed.map((f) => f.id)).size).toBe(listed.length);
    expect(new Map(listed.map((f) => [f.id, f.tier]))).toEqual(stored);
    const totals = tiers.totals();
    expect(totals.tokens.hot).toBeLessThanOrEqual(100);
    expect(totals.population.warm).toBeLessThanOrEqual(8);
    expect(totals.population.cold).toBeLessThanOrEqual(8);
  });
});

describe("reads answered at once", () => {
  test("a get or GetMetrics issued while a store is in flight waits for it, in call order: each sees what was called before it", async () => {
    const { tiers } = await open();
    const stored = tiers.storeFragment(view, input({ id: "late" }));
    const got = tiers.getFragment(view, "late");
    const metrics = tiers.getMetrics(view);
    const missed = tiers.getFragment(view, "never").catch((err: unknown) => err);
    await stored;
    expect((await got).id).toBe("late");
    expect(await metrics).toMatchObject({ hotHits: 1, misses: 0, population: { hot: 1, warm: 0, cold: 0 } });
    expect(await missed).toBeInstanceOf(NotFoundError);
    expect(await tiers.getMetrics(view)).toMatchObject({ hotHits: 1, misses: 1 });
  });

  test("a get answered at once marks the fragment used: LRU order, last access time and the store's record", async () => {
    let clock = 1_000;
    const store = new MemoryTierStore();
    const tiers = await TierService.open(store, {
      budgets: { maxTokensHot: 10, maxDecisionsWarm: 5, maxDecisionsCold: 5 },
      summaryTokens: 16,
      now: () => new Date((clock += 1)),
    });
    await tiers.storeFragment(view, input({ id: "a", content: tokens(4) }));
    await tiers.storeFragment(view, input({ id: "b", content: tokens(4) }));
    const got = await tiers.getFragment(view, "a");
    expect(got.lastAccessedAt.getTime()).toBe(clock);
    const { displaced } = await tiers.storeFragment(view, input({ id: "c", content: tokens(4) }));
    expect(displaced.map((d) => d.id)).toEqual(["b"]);
    const reopened = await TierService.open(store, {
      budgets: { maxTokensHot: 10, maxDecisionsWarm: 5, maxDecisionsCold: 5 },
      summaryTokens: 16,
    });
    const order = (await reopened.getForActor(view, "strategist", [], false)).map((f) => `${f.tier}:${f.id}`);
    expect(order).toEqual(["hot:c", "hot:a", "warm:b"]);
  });
});

describe("group commit on the durable store", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function openDurable() {
    const dir = mkdtempSync(join(tmpdir(), "acms-tier-group-"));
    dirs.push(dir);
    const db = openSqliteDatabase(join(dir, "acms.db"));
    const store = new SqliteFileTierStore(db, join(dir, "cold"));
    const tiers = await TierService.open(store, {
      budgets: { maxTokensHot: 1000, maxDecisionsWarm: 100, maxDecisionsCold: 100 },
      summaryTokens: 16,
    });
    return { tiers, store, db, dir };
  }

  test("every answer comes once what it wrote is durable, and concurrent stores share fsyncs", async () => {
    const { tiers, store, db, dir } = await openDurable();
    // Acknowledged alone: nothing it wrote is left to sync.
    await tiers.storeFragment(view, input({ id: "first", content: "the first note" }));
    expect(store.sync()).toBeUndefined();
    await tiers.getFragment(view, "first");
    expect(store.sync()).toBeUndefined();
    const before = store.walSyncs;
    await Promise.all(Array.from({ length: 24 }, (_, i) => tiers.storeFragment(view, input({ id: `f${i}`, content: `note ${i}` }))));
    expect(store.sync()).toBeUndefined();
    const fsyncs = store.walSyncs - before;
    expect(fsyncs).toBeGreaterThanOrEqual(1);
    expect(fsyncs).toBeLessThan(24);
    await tiers.close();
    db.close();
    const db2 = openSqliteDatabase(join(dir, "acms.db"));
    const again = await TierService.open(new SqliteFileTierStore(db2, join(dir, "cold")), {
      budgets: { maxTokensHot: 1000, maxDecisionsWarm: 100, maxDecisionsCold: 100 },
      summaryTokens: 16,
    });
    expect((await again.getForActor(view, "strategist", [], false)).map((f) => f.id).sort()).toEqual(
      ["first", ...Array.from({ length: 24 }, (_, i) => `f${i}`)].sort(),
    );
    await again.close();
    db2.close();
  });

  test("a read answered at once still waits for the sync of a write it can see", async () => {
    const { tiers, store, db } = await openDurable();
    const stored = tiers.storeFragment(view, input({ id: "seen", content: "written, not yet durable" }));
    // Whatever order the two take, the read's answer never comes before the store's write is durable.
    const read = tiers
      .getFragment(view, "seen")
      .catch(() => undefined)
      .then((f) => {
        expect(store.sync()).toBeUndefined();
        return f;
      });
    await Promise.all([stored, read]);
    // Once the store left the queue (before its sync), a read takes the in-memory path: it waits too.
    const second = tiers.storeFragment(view, input({ id: "seen", content: "written again" }));
    await new Promise((resolve) => setImmediate(resolve));
    const f = await tiers.getFragment(view, "seen");
    expect(f.content).toBe("written again");
    expect(store.sync()).toBeUndefined();
    await second;
    await tiers.close();
    db.close();
  });
});

describe("a fragment against an erasure", () => {
  // The call's scope is resolved before the call reaches the tier queue (on a shared store, the deployment's
  // tier lock), so an erasure may run in between: the fragment's resource and project are read again inside
  // the write, against the real registry, and a fragment naming what is erased, being erased or deleted is
  // refused; the erasure's own removal of fragments runs through the same queue.
  test("naming a resource being erased or erased, or a deleted project, is NOT_FOUND and leaves nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acms-tier-erasure-"));
    const catalog = openSqliteCatalog({ path: join(dir, "acms.db"), coldDir: join(dir, "cold") });
    try {
      const { registry } = catalog;
      const doomed = newUlid();
      const kept = newUlid();
      await registry.createProject("local/api");
      for (const [id, alias] of [
        [doomed, "doomed"],
        [kept, "kept"],
      ])
        await registry.registerResource({ id, project: "local/api", alias, kind: "docs", parentIds: [], metadata: {} });
      const tiers = await TierService.open(catalog.tierStore, { budgets: BUDGETS, summaryTokens: 16, registry });
      // Resolved before the erasure, as a call's scope is.
      const stale = scopeView(["local/api"], [doomed, kept]);
      const before = await tiers.storeFragment(stale, input({ resourceId: doomed, content: "before the erasure" }));

      expect(await registry.beginErasure(doomed)).toBeDefined();
      await rejects(() => tiers.storeFragment(stale, input({ resourceId: doomed, content: "while it is erased" })), NotFoundError);
      await rejects(() => tiers.storeFragment(stale, input({ id: before.fragment.id, resourceId: doomed })), NotFoundError);
      expect(await tiers.eraseFragments({ resourceId: doomed })).toEqual({ fragments: 1, files: 0 });
      await registry.finishErasure(doomed);
      for (const tier of ["hot", "warm", "cold"] as const) {
        await rejects(() => tiers.storeFragment(stale, input({ resourceId: doomed, tier, content: prose(2) })), NotFoundError);
      }
      // The other resource and the project itself still take fragments.
      await tiers.storeFragment(stale, input({ resourceId: kept, content: "about the kept one" }));
      await tiers.storeFragment(stale, input({ content: "about the project" }));
      expect((await catalog.tierStore.load()).map((f) => f.resourceId).sort()).toEqual(["", kept].sort());

      await tiers.eraseFragments({ resourceId: kept });
      expect(await registry.beginErasure(kept)).toBeDefined();
      await registry.finishErasure(kept);
      await registry.deleteProject("local/api");
      await tiers.eraseFragments({ projectName: "local/api" });
      await rejects(() => tiers.storeFragment(stale, input({ content: "after the project went" })), NotFoundError);
      expect(await catalog.tierStore.load()).toEqual([]);
      await tiers.close();
    } finally {
      await catalog.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
