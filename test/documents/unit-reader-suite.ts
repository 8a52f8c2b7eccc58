import type { DocumentInputRecord, DocumentStore } from "../../src/ports/document-store.js";
import type { ChunkText, UnitReader, UnitRecord, UnitVisibility } from "../../src/ports/unit-reader.js";
import type { TemporalScope } from "../../src/domain/scope.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";

/** One reader under test, and the document store it reads (the suite writes through it). */
export interface UnitReaderHarness {
  reader: UnitReader;
  store: DocumentStore;
  /** Releases whatever the harness holds. */
  close(): Promise<void> | void;
}

/** How one adapter of the UnitReader port is run through the shared suite. */
export interface UnitReaderSuiteOptions extends ConformanceOptions {
  /** A fresh, empty store and its reader per test. */
  create(): Promise<UnitReaderHarness> | UnitReaderHarness;
}

const R1 = "01JUN1T0000000000000000001";
const R2 = "01JUN1T0000000000000000002";
const T0 = 1_700_000_000_000;
const WINDOW = 60_000;

function doc(
  path: string,
  chunks: string[],
  metadata: Record<string, string> = { v: "1" },
  content = chunks.join(" | "),
): DocumentInputRecord {
  return { path, content, metadata, chunks: chunks.map((text) => ({ text })) };
}

function at(temporal: TemporalScope, now: number): UnitVisibility {
  return { temporal, now, recentWindowMs: WINDOW };
}

const sortChunks = (c: readonly ChunkText[]) => [...c].sort((a, b) => a.chunkKey - b.chunkKey);

/**
 * The conformance suite of the UnitReader port: readUnits answers one entry per address in request order
 * (duplicates repeat, undefined where nothing visible holds the unit), documents and chunks by address,
 * the newest version the temporal setting (current, recent, all) allows, and snapshotChunks holds every
 * retained chunk version, consistent with the generation it names. Every call is awaited, so a
 * synchronous and an asynchronous adapter run the same tests.
 */
export function runUnitReaderSuite(opts: UnitReaderSuiteOptions): void {
  conformanceSuite("UnitReader", opts, (test) => {
    let h: UnitReaderHarness;
    let reader: UnitReader;
    let store: DocumentStore;
    beforeEach(async () => {
      h = await opts.create();
      reader = h.reader;
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    const read = async (addresses: Parameters<UnitReader["readUnits"]>[0], v: UnitVisibility = at("current", T0 + 10 * WINDOW)) =>
      reader.readUnits(addresses, v);

    test("answers one entry per address, in request order, duplicates repeated, undefined where nothing is held", async () => {
      await store.upsertDocuments(R1, [doc("a.md", ["a zero", "a one"], { k: "a" }), doc("dir/b.md", ["b zero"], { k: "b" })], T0);
      await store.upsertDocuments(R2, [doc("a.md", ["other resource"], { k: "r2" })], T0);
      const got = await read([
        { resourceId: R1, path: "dir/b.md", chunkIndex: 0 },
        { resourceId: R2, path: "a.md" },
        { resourceId: R1, path: "missing.md" },
        { resourceId: R1, path: "a.md", chunkIndex: 1 },
        { resourceId: R1, path: "a.md", chunkIndex: 7 },
        { resourceId: R1, path: "dir/b.md", chunkIndex: 0 },
        { resourceId: "01JUN1T000000000000000000Z", path: "a.md" },
      ]);
      expect(got).toEqual([
        { resourceId: R1, path: "dir/b.md", chunkIndex: 0, content: "b zero", metadata: { k: "b" }, supersededAt: null },
        { resourceId: R2, path: "a.md", content: "other resource", metadata: { k: "r2" }, supersededAt: null },
        undefined,
        { resourceId: R1, path: "a.md", chunkIndex: 1, content: "a one", metadata: { k: "a" }, supersededAt: null },
        undefined,
        { resourceId: R1, path: "dir/b.md", chunkIndex: 0, content: "b zero", metadata: { k: "b" }, supersededAt: null },
        undefined,
      ]);
      expect(await read([])).toEqual([]);
    });

    test("a document address answers the whole content, a chunk address the chunk's text", async () => {
      await store.upsertDocuments(R1, [doc("a.md", ["first part ", "second part"], { lang: "en" }, "THE WHOLE DOCUMENT")], T0);
      const [whole, part] = await read([
        { resourceId: R1, path: "a.md" },
        { resourceId: R1, path: "a.md", chunkIndex: 0 },
      ]);
      expect(whole).toEqual({ resourceId: R1, path: "a.md", content: "THE WHOLE DOCUMENT", metadata: { lang: "en" }, supersededAt: null });
      expect(whole!.chunkIndex).toBeUndefined();
      expect(part).toEqual({
        resourceId: R1,
        path: "a.md",
        chunkIndex: 0,
        content: "first part ",
        metadata: { lang: "en" },
        supersededAt: null,
      });
    });

    test("current sees the live version only; recent also versions superseded within the window; all every retained one", async () => {
      await store.upsertDocuments(R1, [doc("a.md", ["v1 zero", "v1 one", "v1 two"], { v: "1" })], T0);
      const changedAt = T0 + 1_000;
      await store.upsertDocuments(R1, [doc("a.md", ["v2 zero"], { v: "2" })], changedAt);
      const addrs = [
        { resourceId: R1, path: "a.md" },
        { resourceId: R1, path: "a.md", chunkIndex: 0 },
        { resourceId: R1, path: "a.md", chunkIndex: 2 },
      ];
      const live = { resourceId: R1, path: "a.md", content: "v2 zero", metadata: { v: "2" }, supersededAt: null };
      const liveChunk = { ...live, chunkIndex: 0 };
      const oldChunk = { resourceId: R1, path: "a.md", chunkIndex: 2, content: "v1 two", metadata: { v: "1" }, supersededAt: changedAt };
      const within = changedAt + WINDOW / 2;
      const beyond = changedAt + 3 * WINDOW;
      expect(await read(addrs, at("current", within))).toEqual([live, liveChunk, undefined]);
      expect(await read(addrs, at("recent", within))).toEqual([live, liveChunk, oldChunk]);
      expect(await read(addrs, at("recent", beyond))).toEqual([live, liveChunk, undefined]);
      expect(await read(addrs, at("all", beyond))).toEqual([live, liveChunk, oldChunk]);
    });

    test("a deleted document: absent for current, its last version for recent within the window and for all", async () => {
      await store.upsertDocuments(R1, [doc("a.md", ["old text"], { v: "1" }, "old whole")], T0);
      await store.upsertDocuments(R1, [doc("a.md", ["last text"], { v: "2" }, "last whole")], T0 + 1_000);
      const deletedAt = T0 + 2_000;
      await store.deleteDocuments(R1, ["a.md"], deletedAt);
      const addrs = [
        { resourceId: R1, path: "a.md" },
        { resourceId: R1, path: "a.md", chunkIndex: 0 },
      ];
      const last = { resourceId: R1, path: "a.md", content: "last whole", metadata: { v: "2" }, supersededAt: deletedAt };
      expect(await read(addrs, at("current", deletedAt + 1))).toEqual([undefined, undefined]);
      expect(await read(addrs, at("recent", deletedAt + 1))).toEqual([last, { ...last, chunkIndex: 0, content: "last text" }]);
      expect(await read(addrs, at("recent", deletedAt + 2 * WINDOW))).toEqual([undefined, undefined]);
      expect(await read(addrs, at("all", deletedAt + 2 * WINDOW))).toEqual([last, { ...last, chunkIndex: 0, content: "last text" }]);
    });

    test("a chunk answers at the newest visible version that has it", async () => {
      await store.upsertDocuments(R1, [doc("a.md", ["v1 zero", "v1 one", "v1 two"], { v: "1" })], T0);
      await store.upsertDocuments(R1, [doc("a.md", ["v2 zero", "v2 one"], { v: "2" })], T0 + 1_000);
      await store.upsertDocuments(R1, [doc("a.md", ["v3 zero"], { v: "3" })], T0 + 2_000);
      const all = at("all", T0 + 3_000);
      const got = await read(
        [0, 1, 2, 3].map((chunkIndex) => ({ resourceId: R1, path: "a.md", chunkIndex })),
        all,
      );
      expect(got.map((u) => u && [u.content, u.supersededAt, u.metadata.v])).toEqual([
        ["v3 zero", null, "3"],
        ["v2 one", T0 + 2_000, "2"],
        ["v1 two", T0 + 1_000, "1"],
        undefined,
      ]);
      // Within the window of the v3 change only: v2 is visible to recent, v1 (superseded earlier) is not.
      const recent = await read(
        [1, 2].map((chunkIndex) => ({ resourceId: R1, path: "a.md", chunkIndex })),
        { temporal: "recent", now: T0 + 2_500, recentWindowMs: 1_000 },
      );
      expect(recent.map((u) => u?.content)).toEqual(["v2 one", undefined]);
    });

    test("an identical re-upsert changes no answer", async () => {
      const d = doc("a.md", ["same"], { v: "1" });
      await store.upsertDocuments(R1, [d], T0);
      await store.upsertDocuments(R1, [d], T0 + 1_000);
      expect(await read([{ resourceId: R1, path: "a.md", chunkIndex: 0 }], at("all", T0 + 2_000))).toEqual([
        { resourceId: R1, path: "a.md", chunkIndex: 0, content: "same", metadata: { v: "1" }, supersededAt: null },
      ]);
    });

    test("snapshotChunks holds every retained chunk version with its text, and the store's generation", async () => {
      const empty = await reader.snapshotChunks();
      expect(empty.chunks).toEqual([]);
      expect(empty.generation).toBe(await store.generation());
      await store.upsertDocuments(R1, [doc("a.md", ["one", "two"])], T0);
      await store.upsertDocuments(R1, [doc("a.md", ["three"])], T0 + 1_000);
      await store.upsertDocuments(R2, [doc("b.md", ["four"])], T0);
      await store.deleteDocuments(R2, ["b.md"], T0 + 2_000);
      const snap = await reader.snapshotChunks();
      expect(snap.generation).toBe(await store.generation());
      const rows = sortChunks(snap.chunks);
      expect(rows.map((c) => [c.resourceId, c.path, c.chunkIndex, c.text, c.supersededAt])).toEqual([
        [R1, "a.md", 0, "one", T0 + 1_000],
        [R1, "a.md", 1, "two", T0 + 1_000],
        [R1, "a.md", 0, "three", null],
        [R2, "b.md", 0, "four", T0 + 2_000],
      ]);
      const byStore = await store.getChunks(rows.map((c) => c.chunkKey));
      for (const c of rows)
        expect(byStore.get(c.chunkKey)).toMatchObject({
          resourceId: c.resourceId,
          path: c.path,
          chunkIndex: c.chunkIndex,
          text: c.text,
          supersededAt: c.supersededAt,
        });
    });

    test("a snapshot is consistent with its generation: it holds a write exactly when its generation includes it", async () => {
      const writes: Array<{ generation: bigint; keys: number[] }> = [];
      const snapshots: Array<Awaited<ReturnType<UnitReader["snapshotChunks"]>>> = [];
      const keysOf = async (generation: bigint) => {
        const snap = await reader.snapshotChunks();
        expect(snap.generation).toBe(generation);
        return new Set(snap.chunks.map((c) => c.chunkKey));
      };
      let known = new Set<number>();
      for (let i = 0; i < 12; i++) {
        const [out, snap] = await Promise.all([
          store.upsertDocuments(R1, [doc(`d${i % 4}.md`, [`text ${i}`, `more ${i}`])], T0 + i),
          reader.snapshotChunks(),
        ]);
        const after = await keysOf(out.generation);
        const added = [...after].filter((k) => !known.has(k));
        writes.push({ generation: out.generation, keys: added });
        snapshots.push(snap);
        known = after;
      }
      for (const snap of snapshots) {
        const held = new Set(snap.chunks.map((c) => c.chunkKey));
        for (const w of writes) {
          for (const k of w.keys) expect({ key: k, held: held.has(k) }).toEqual({ key: k, held: w.generation <= snap.generation });
        }
      }
      // A snapshot never changes under its reader, and two snapshots of one generation are equal.
      const a = await reader.snapshotChunks();
      const b = await reader.snapshotChunks();
      expect(sortChunks(b.chunks)).toEqual(sortChunks(a.chunks));
      expect(b.generation).toBe(a.generation);
      const frozen = sortChunks(a.chunks).map((c) => ({ ...c }));
      await store.upsertDocuments(R1, [doc("late.md", ["after the snapshot"])], T0 + 99);
      expect(sortChunks(a.chunks)).toEqual(frozen);
    });

    test("versions dropped by retention leave the snapshot and every read", async () => {
      const chunkOne = [{ resourceId: R1, path: "a.md", chunkIndex: 1 }];
      const all = at("all", T0 + 100_000);
      await store.upsertDocuments(R1, [doc("a.md", ["version 0", "only version 0 has a second chunk"])], T0);
      for (let i = 1; i <= 16; i++) await store.upsertDocuments(R1, [doc("a.md", [`version ${i}`])], T0 + i * 1_000);
      expect((await read(chunkOne, all))[0]?.content).toBe("only version 0 has a second chunk");
      expect((await reader.snapshotChunks()).chunks).toHaveLength(18);
      await store.upsertDocuments(R1, [doc("a.md", ["version 17"])], T0 + 17_000);
      const texts = (await reader.snapshotChunks()).chunks.map((c) => c.text);
      expect(texts).toHaveLength(17);
      expect(texts).not.toContain("version 0");
      expect(texts).toContain("version 1");
      expect(await read(chunkOne, all)).toEqual([undefined]);
    });
  });
}
