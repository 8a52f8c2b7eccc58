import { AlreadyExistsError } from "../../src/domain/errors.js";
import { TEMPORAL_SCOPES, type ResourceScope } from "../../src/domain/scope.js";
import { newUlid } from "../../src/domain/ulid-id.js";
import type { ScopeStore } from "../../src/ports/scope-store.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";

/** One store under test, and (for a durable one) a fresh instance over the same data. */
export interface ScopeStoreHarness {
  store: ScopeStore;
  /**
   * Closes `store` and opens a new one over the same data. A store that keeps nothing has none and skips
   * "a saved scope survives a restart, field for field".
   */
  reopen?(): Promise<ScopeStore> | ScopeStore;
  /** Releases whatever the harness holds (after the store is closed). */
  close(): Promise<void> | void;
}

/** How one adapter of the ScopeStore port is run through the shared suite. */
export interface ScopeStoreSuiteOptions extends ConformanceOptions {
  /** A fresh, empty store per test. */
  create(): Promise<ScopeStoreHarness> | ScopeStoreHarness;
}

/** A scope with every field set to something a round trip could lose. */
export function sampleScope(over: Partial<ResourceScope> = {}): ResourceScope {
  return {
    scopeId: newUlid(),
    owner: "agent-a",
    resourceIds: ["01JAAAAAAAAAAAAAAAAAAAAAA1", "01JAAAAAAAAAAAAAAAAAAAAAA2"],
    projectNames: ["local/api", "local/web"],
    temporalScope: "recent",
    includeResources: ["core", "local/web:ui"],
    excludeResources: ["01JAAAAAAAAAAAAAAAAAAAAAA3"],
    includePaths: ["src/**", "docs/*.md"],
    excludePaths: ["**/secret/**", "café/ü.md"],
    parentScopeId: newUlid(),
    expandDescendants: false,
    deniedResourceIds: ["01JAAAAAAAAAAAAAAAAAAAAAA3"],
    createdAt: new Date(1_700_000_123_456),
    ...over,
  };
}

/** A plain copy, so a comparison does not depend on the store handing back the caller's own object. */
function copy(s: ResourceScope): ResourceScope {
  return structuredClone(s);
}

async function rejection(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

/**
 * The conformance suite of the ScopeStore port: a saved scope reads back whole (every field, the owner,
 * the creation time), unknown ids are absent, a scope is immutable once saved (a second save of its id is
 * AlreadyExists and changes nothing, changing the caller's object afterwards changes nothing), scopes do
 * not bleed into each other, each owner's usage (count and bytes) is its own, and a durable store keeps them
 * across a restart. Every call is awaited, so
 * a synchronous and an asynchronous adapter run the same tests.
 */
export function runScopeStoreSuite(opts: ScopeStoreSuiteOptions): void {
  conformanceSuite("ScopeStore", opts, (test) => {
    let h: ScopeStoreHarness;
    let store: ScopeStore;
    beforeEach(async () => {
      h = await opts.create();
      store = h.store;
    });
    afterEach(async () => {
      await store.close();
      await h.close();
    });

    test("a saved scope reads back with every field, its owner and its creation time", async () => {
      const s = sampleScope();
      await store.save(s);
      const back = await store.get(s.scopeId);
      expect(back).toEqual(copy(s));
      expect(back!.createdAt).toBeInstanceOf(Date);
      expect(back!.createdAt.getTime()).toBe(s.createdAt.getTime());
    });

    test("an unknown id is absent, also after other scopes were saved", async () => {
      expect(await store.get(newUlid())).toBeUndefined();
      await store.save(sampleScope());
      expect(await store.get(newUlid())).toBeUndefined();
      expect(await store.get("")).toBeUndefined();
    });

    test("every temporal setting, empty lists and a root scope round-trip", async () => {
      for (const temporalScope of TEMPORAL_SCOPES) {
        const s = sampleScope({
          temporalScope,
          resourceIds: [],
          projectNames: ["local/api"],
          includeResources: [],
          excludeResources: [],
          includePaths: [],
          excludePaths: [],
          parentScopeId: "",
          expandDescendants: true,
          deniedResourceIds: [],
        });
        await store.save(s);
        expect(await store.get(s.scopeId)).toEqual(copy(s));
      }
    });

    test("a second save of the same id is AlreadyExists and leaves the first scope as it was", async () => {
      const first = sampleScope();
      await store.save(first);
      const second = sampleScope({ scopeId: first.scopeId, owner: "agent-b", resourceIds: ["01JBBBBBBBBBBBBBBBBBBBBBB1"] });
      expect(await rejection(() => store.save(second))).toBeInstanceOf(AlreadyExistsError);
      expect(await store.get(first.scopeId)).toEqual(copy(first));
    });

    test("changing the caller's object after save changes nothing stored", async () => {
      const s = sampleScope();
      const expected = copy(s);
      await store.save(s);
      (s.resourceIds as string[]).push("01JCCCCCCCCCCCCCCCCCCCCCC1");
      (s.excludePaths as string[]).length = 0;
      s.owner = "someone-else";
      expect(await store.get(expected.scopeId)).toEqual(expected);
    });

    test("many scopes are kept apart: each id answers its own scope", async () => {
      const scopes = Array.from({ length: 40 }, (_, i) =>
        sampleScope({
          owner: `agent-${i % 3}`,
          resourceIds: [`01JAAAAAAAAAAAAAAAAAAAA${String(i).padStart(3, "0")}`],
          projectNames: [`local/p${i}`],
          temporalScope: TEMPORAL_SCOPES[i % 3],
          includePaths: [`dir${i}/**`],
          expandDescendants: i % 2 === 0,
          createdAt: new Date(1_700_000_000_000 + i),
        }),
      );
      for (const s of scopes) await store.save(s);
      for (const s of [...scopes].reverse()) expect(await store.get(s.scopeId)).toEqual(copy(s));
    });

    test("an owner's scopes are listed by id descending, paged, and never another owner's", async () => {
      const mine: ResourceScope[] = [];
      for (let i = 0; i < 7; i++) {
        const s = sampleScope({ owner: "agent-a", projectNames: [`local/p${i}`] });
        mine.push(s);
        await store.save(s);
        await store.save(sampleScope({ owner: "agent-b" }));
        await store.save(sampleScope({ owner: "agent-a2" }));
      }
      const expected = mine
        .map((s) => s.scopeId)
        .sort()
        .reverse();
      const seen: string[] = [];
      let before: string | undefined;
      let pages = 0;
      do {
        const page = await store.listByOwner("agent-a", { limit: 3, before });
        pages += 1;
        expect(page.scopes.length).toBeLessThanOrEqual(3);
        for (const s of page.scopes) {
          expect(s.owner).toBe("agent-a");
          expect(s).toEqual(copy(mine.find((m) => m.scopeId === s.scopeId)!));
        }
        seen.push(...page.scopes.map((s) => s.scopeId));
        before = page.next;
      } while (before !== undefined && pages < 10);
      expect(seen).toEqual(expected);
      expect(pages).toBe(3);
      const exact = await store.listByOwner("agent-a", { limit: 7 });
      expect(exact.scopes.map((s) => s.scopeId)).toEqual(expected);
      expect(exact.next).toBeUndefined();
      expect(await store.listByOwner("agent-c", { limit: 5 })).toEqual({ scopes: [], next: undefined });
      expect((await store.listByOwner("agent-b", { limit: 100 })).scopes.every((s) => s.owner === "agent-b")).toBe(true);
      expect((await store.listByOwner("agent-b", { limit: 100 })).scopes).toHaveLength(7);
    });

    test("listByOwner pages by position: stable while scopes are added between pages, and any id may be the position", async () => {
      const older = sampleScope({ owner: "agent-a" });
      const middle = sampleScope({ owner: "agent-a" });
      const foreign = sampleScope({ owner: "agent-b" });
      const newest = sampleScope({ owner: "agent-a" });
      for (const s of [older, middle, foreign, newest]) await store.save(s);
      const first = await store.listByOwner("agent-a", { limit: 1 });
      expect(first.scopes.map((s) => s.scopeId)).toEqual([newest.scopeId]);
      // A scope saved after the first page is newer than the position: the next page does not repeat or show it.
      const added = sampleScope({ owner: "agent-a" });
      await store.save(added);
      const rest = await store.listByOwner("agent-a", { limit: 5, before: first.next });
      expect(rest.scopes.map((s) => s.scopeId)).toEqual([middle.scopeId, older.scopeId]);
      // Another owner's id as the position only says where to start among agent-a's own.
      const fromForeign = await store.listByOwner("agent-a", { limit: 5, before: foreign.scopeId });
      expect(fromForeign.scopes.map((s) => s.scopeId)).toEqual([middle.scopeId, older.scopeId]);
    });

    test("an owner's usage counts its scopes and their stored bytes, never another owner's", async () => {
      expect(await store.usageOf("agent-a")).toEqual({ scopes: 0, bytes: 0 });
      const small = sampleScope({ owner: "agent-a", includePaths: [] });
      await store.save(small);
      const one = await store.usageOf("agent-a");
      expect(one.scopes).toBe(1);
      expect(one.bytes).toBeGreaterThan(0);
      // 1,000 more characters of which 500 are two bytes in UTF-8: at least 1,500 more bytes.
      const large = sampleScope({ owner: "agent-a", includePaths: ["a".repeat(500) + "é".repeat(500)] });
      await store.save(large);
      const two = await store.usageOf("agent-a");
      expect(two.scopes).toBe(2);
      expect(two.bytes - one.bytes).toBeGreaterThanOrEqual(one.bytes + 1500);
      await store.save(sampleScope({ owner: "agent-b" }));
      expect(await store.usageOf("agent-a")).toEqual(two);
      expect((await store.usageOf("agent-b")).scopes).toBe(1);
      expect(await store.usageOf("agent-c")).toEqual({ scopes: 0, bytes: 0 });
      // A refused second save of an id counts nothing.
      await rejection(() => store.save(sampleScope({ scopeId: small.scopeId, owner: "agent-a" })));
      expect(await store.usageOf("agent-a")).toEqual(two);
    });

    test("a capped save is refused at the caps, atomically: concurrent saves of one owner never overshoot", async () => {
      const caps = { scopes: 5, bytes: Number.MAX_SAFE_INTEGER };
      // Twenty saves of one owner in flight at once: exactly five are stored, whatever the interleaving.
      const results = await Promise.all(Array.from({ length: 20 }, () => store.save(sampleScope({ owner: "agent-a" }), caps)));
      expect(results.filter((r) => r).length).toBe(5);
      expect((await store.usageOf("agent-a")).scopes).toBe(5);
      // A refused save stores nothing: the scope is absent and usage is unchanged.
      const refused = sampleScope({ owner: "agent-a" });
      expect(await store.save(refused, caps)).toBe(false);
      expect(await store.get(refused.scopeId)).toBeUndefined();
      // The caps are the owner's: another owner is not refused, and an uncapped save still stores.
      expect(await store.save(sampleScope({ owner: "agent-b" }), caps)).toBe(true);
      expect(await store.save(sampleScope({ owner: "agent-a" }))).toBe(true);
      // The byte cap: refused once the owner holds that many bytes.
      const used = (await store.usageOf("agent-c")).bytes;
      expect(await store.save(sampleScope({ owner: "agent-c" }), { scopes: 100, bytes: used + 1 })).toBe(true);
      expect(await store.save(sampleScope({ owner: "agent-c" }), { scopes: 100, bytes: used + 1 })).toBe(false);
    });

    test("a saved scope survives a restart, field for field", async () => {
      const a = sampleScope();
      const b = sampleScope({ temporalScope: "all", owner: "agent-b", parentScopeId: a.scopeId });
      await store.save(a);
      await store.save(b);
      store = await h.reopen!();
      expect(await store.get(a.scopeId)).toEqual(copy(a));
      expect(await store.get(b.scopeId)).toEqual(copy(b));
      expect(await rejection(() => store.save(sampleScope({ scopeId: a.scopeId })))).toBeInstanceOf(AlreadyExistsError);
      expect((await store.usageOf("agent-b")).scopes).toBe(1);
      expect((await store.usageOf("agent-b")).bytes).toBeGreaterThan(0);
    });
  });
}
