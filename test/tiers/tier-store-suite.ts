import type { TierFragment, TierName } from "../../src/domain/tier-fragment.js";
import type { TierStore } from "../../src/ports/tier-store.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";

/** How the suite makes a store, and (for durable ones) a fresh instance over the same data. */
export interface TierStoreSuiteOptions extends ConformanceOptions {
  create: () => Promise<TierStore>;
  /** A new store over the data of `store` (closed first); absent for stores that keep nothing. */
  reopen?: (store: TierStore) => Promise<TierStore>;
  /**
   * Every file the store keeps its data in (its database and cold files), for stores whose files the test
   * can read: a removed fragment's content must be in none of them once the store was reopened.
   */
  files?: (store: TierStore) => string[];
}

let seq = 0;
/** The owner (principal namespace) of suite records unless a test names another. */
export const OWNER = "writer";
/** A fragment record for the suite; every call gets a larger access sequence number. */
export function record(id: string, tier: TierName, content = `content of ${id}`, over: Partial<TierFragment> = {}): TierFragment {
  seq += 1;
  const at = new Date(1_700_000_000_000 + seq);
  return {
    owner: OWNER,
    id,
    tier,
    projectName: "local/api",
    resourceId: "",
    metadata: { n: String(seq) },
    content,
    summary: tier === "cold" ? `summary of ${id}` : "",
    tokenCount: content.split(" ").length,
    createdAt: at,
    updatedAt: at,
    lastAccessedAt: at,
    accessSeq: seq,
    ...over,
  };
}

/** The TierStore conformance suite: every adapter of the port runs it. */
export function runTierStoreSuite(opts: TierStoreSuiteOptions): void {
  conformanceSuite("TierStore", opts, (it) => {
    it("saves and loads every fragment in access order, with content only for hot", async () => {
      const s = await opts.create();
      const c = record("c", "cold");
      const h = record("h", "hot", "hot words", { metadata: { k: "v" }, resourceId: "01HZZZZZZZZZZZZZZZZZZZZZZZ" });
      const w = record("w", "warm");
      for (const f of [w, c, h]) await s.save(f);
      const loaded = await s.load();
      expect(loaded.map((f) => f.id)).toEqual(["c", "h", "w"]);
      expect(loaded[1]).toEqual({ ...h });
      expect(loaded[0]).toEqual({ ...c, content: undefined });
      expect(loaded[2].content).toBeUndefined();
      expect(await s.readContents(OWNER, ["w", "c", "h", "missing"])).toEqual(
        new Map([
          ["w", w.content],
          ["c", c.content],
          ["h", "hot words"],
        ]),
      );
      await s.close();
    });

    it("a save replaces the fragment's copy in any other tier", async () => {
      const s = await opts.create();
      await s.save(record("f", "hot", "one"));
      await s.save(record("f", "cold", "two"));
      await s.save(record("f", "cold", "three"));
      await s.save(record("f", "warm", "four"));
      const loaded = await s.load();
      expect(loaded.map((f) => [f.id, f.tier])).toEqual([["f", "warm"]]);
      expect((await s.readContents(OWNER, ["f"])).get("f")).toBe("four");
      await s.save(record("f", "cold", "five"));
      expect((await s.load()).map((f) => [f.id, f.tier, f.summary])).toEqual([["f", "cold", "summary of f"]]);
      expect((await s.readContents(OWNER, ["f"])).get("f")).toBe("five");
      await s.close();
    });

    it("remove deletes from any tier and is a no-op when absent", async () => {
      const s = await opts.create();
      await s.save(record("a", "hot"));
      await s.save(record("b", "cold"));
      await s.remove(OWNER, "a");
      await s.remove(OWNER, "b");
      await s.remove(OWNER, "nothing");
      expect(await s.load()).toEqual([]);
      expect((await s.readContents(OWNER, ["a", "b"])).size).toBe(0);
      await s.close();
    });

    it("a removal from each tier is durable and leaves the other fragments (and no copy in the store's files)", async () => {
      let s = await opts.create();
      const marker = (id: string) => `gonecontent${id}marker`;
      for (const [id, tier] of [
        ["h", "hot"],
        ["w", "warm"],
        ["c", "cold"],
      ] as const) {
        await s.save(record(id, tier, `${marker(id)} words`, { summary: tier === "cold" ? `${marker(id)} summary` : "" }));
      }
      const kept = record("k", "cold", "kept words");
      await s.save(kept);
      await s.sync();
      for (const id of ["h", "w", "c"]) await s.remove(OWNER, id);
      await s.sync();
      if (opts.reopen) s = await opts.reopen(s);
      expect((await s.load()).map((f) => f.id)).toEqual(["k"]);
      expect(await s.readContents(OWNER, ["h", "w", "c", "k"])).toEqual(new Map([["k", "kept words"]]));
      if (opts.files) {
        const { readFileSync } = await import("node:fs");
        const files = opts.files(s);
        expect(files.length).toBeGreaterThan(0);
        for (const id of ["h", "w", "c"]) expect(files.filter((file) => readFileSync(file).includes(marker(id)))).toEqual([]);
        expect(files.some((file) => readFileSync(file).includes("kept words"))).toBe(true);
      }
      await s.close();
    });

    it("recorded accesses reorder the load, and never override a later save", async () => {
      let s = await opts.create();
      const a = record("a", "warm");
      const b = record("b", "cold");
      await s.save(a);
      await s.save(b);
      const later = record("x", "hot");
      s.recordAccess(OWNER, "a", later.lastAccessedAt, later.accessSeq);
      const stale = record("y", "hot");
      const moved = record("b", "warm");
      await s.save(moved);
      s.recordAccess(OWNER, "b", stale.lastAccessedAt, stale.accessSeq - 1000);
      if (opts.reopen) s = await opts.reopen(s);
      else await s.close();
      const loaded = await s.load();
      expect(loaded.map((f) => [f.id, f.accessSeq])).toEqual([
        ["a", later.accessSeq],
        ["b", moved.accessSeq],
      ]);
      expect(loaded[0].lastAccessedAt).toEqual(later.lastAccessedAt);
      await s.close();
    });

    it("survives a restart: every fragment, its tier, content and summary", async () => {
      if (!opts.reopen) throw new Error("unreachable: skipped for stores without reopen");
      const s = await opts.create();
      const saved = [record("h", "hot", "hot text"), record("w", "warm", "warm text"), record("c", "cold", "cold text")];
      for (const f of saved) await s.save(f);
      const r = await opts.reopen(s);
      const loaded = await r.load();
      expect(loaded).toEqual(saved.map((f) => ({ ...f, content: f.tier === "hot" ? f.content : undefined })));
      expect(await r.readContents(OWNER, ["w", "c"])).toEqual(
        new Map([
          ["w", "warm text"],
          ["c", "cold text"],
        ]),
      );
      await r.close();
    });

    it("fragment ids are per owner: the same id under two owners is two fragments in every operation", async () => {
      let s = await opts.create();
      // Owners chosen so a naive "owner/id" or "owner:id" join would collide: the store must keep them apart.
      const mine = record("plan-1", "cold", "my plan", { owner: "a/b" });
      const theirs = record("plan-1", "warm", "their plan", { owner: "a", projectName: "other/x" });
      const slashed = record("b/plan-1", "hot", "slashed plan", { owner: "a" });
      for (const f of [mine, theirs, slashed]) await s.save(f);
      expect(await s.readContents("a/b", ["plan-1"])).toEqual(new Map([["plan-1", "my plan"]]));
      expect(await s.readContents("a", ["plan-1", "b/plan-1"])).toEqual(
        new Map([
          ["plan-1", "their plan"],
          ["b/plan-1", "slashed plan"],
        ]),
      );
      expect((await s.readContents("nobody", ["plan-1"])).size).toBe(0);
      // An access recorded for one owner never reorders the other's fragment of the same id.
      const later = record("x", "hot");
      s.recordAccess("a", "plan-1", later.lastAccessedAt, later.accessSeq);
      if (opts.reopen) s = await opts.reopen(s);
      const loaded = await s.load();
      expect(loaded.map((f) => [f.owner, f.id, f.tier, f.accessSeq])).toEqual([
        ["a/b", "plan-1", "cold", mine.accessSeq],
        ["a", "b/plan-1", "hot", slashed.accessSeq],
        ["a", "plan-1", "warm", later.accessSeq],
      ]);
      // Removing one owner's fragment leaves the other's of the same id where it was.
      await s.remove("a", "plan-1");
      expect((await s.load()).map((f) => [f.owner, f.id])).toEqual([
        ["a/b", "plan-1"],
        ["a", "b/plan-1"],
      ]);
      expect(await s.readContents("a/b", ["plan-1"])).toEqual(new Map([["plan-1", "my plan"]]));
      await s.close();
    });
  });
}
