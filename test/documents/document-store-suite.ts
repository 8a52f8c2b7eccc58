import type { ChunkRecord, DocumentInputRecord, DocumentStore } from "../../src/ports/document-store.js";
import type { TextBackend, TextSearchOptions } from "../../src/ports/text-backend.js";
import type { VectorEntry } from "../../src/ports/vector-backend.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";
import { testView } from "../text/text-corpus.js";

/** One store under test, with what the keyword tests need when the store keeps a native keyword index. */
export interface DocumentStoreHarness {
  store: DocumentStore;
  /** Closes `store` and opens a new one over the same data (the restart test is skipped without it). */
  reopen?(): Promise<DocumentStore> | DocumentStore;
  /** The keyword search over the same storage, updated in the store's transactions (native keyword index only). */
  text?: TextBackend;
  /** Writes a keyword row tagged with `resourceId` that no stored chunk backs, as an older or crashed writer could leave. */
  addStrayKeywordRow?(resourceId: string, text: string): Promise<void> | void;
  /** Releases whatever the harness holds (after the store is closed). */
  close(): Promise<void> | void;
}

/** How one adapter of the DocumentStore port is run through the shared suite. */
export interface DocumentStoreSuiteOptions extends ConformanceOptions {
  /** A fresh, empty store per test, with the default retention (16 superseded versions per document). */
  create(): Promise<DocumentStoreHarness> | DocumentStoreHarness;
  /**
   * True when the store keeps a keyword index in its own transactions (its harness then gives `text` and
   * `addStrayKeywordRow`); false skips the keyword tests, since keyword search then runs on the in-memory
   * BM25 over UnitReader snapshots and has its own suite.
   */
  nativeKeywordIndex: boolean;
}

const R1 = "01JD0C00000000000000000001";
const R2 = "01JD0C00000000000000000002";
const T0 = 1_700_000_000_000;
const RETAINED = 16;
const searchOpts: TextSearchOptions = { maxResults: 50, now: T0 + 10_000, recentWindowMs: 60_000 };

const KEYWORD_TESTS = [
  "keyword search sees a committed write and never a rejected one",
  "incremental reindex keeps every keyword row; full reindex wipes stray ones",
];
const RESTART_TEST = "documents, versions and the generation survive a restart";

let seed = 1;
/** A fresh embedding, never equal to another one of the run. */
function embedding(): Float32Array {
  seed += 1;
  return Float32Array.from([seed, 1 / seed, seed % 7, 1]);
}

/** A document input; every chunk gets an embedding unless `embed` is false. */
function doc(
  path: string,
  chunks: string[],
  over: { content?: string; metadata?: Record<string, string>; embed?: boolean } = {},
): DocumentInputRecord {
  return {
    path,
    content: over.content ?? chunks.join("\n"),
    metadata: over.metadata ?? { lang: "en" },
    chunks: chunks.map((text) => (over.embed === false ? { text } : { text, embedding: embedding() })),
  };
}

/** A document whose content cannot be read: any store fails on it part way through a batch. */
function unreadable(path: string): DocumentInputRecord {
  return {
    path,
    get content(): string {
      throw new Error("unreadable document (a rejected batch, on purpose)");
    },
    metadata: {},
    chunks: [{ text: "never stored", embedding: embedding() }],
  };
}

async function rejection(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

const sorted = (keys: readonly number[]) => [...keys].sort((a, b) => a - b);

/** Entries by chunk key, vectors as plain arrays, for comparisons that ignore the store's order. */
function byKey(entries: readonly VectorEntry[]): Array<Omit<VectorEntry, "vector"> & { vector: number[] }> {
  return [...entries].sort((a, b) => a.chunkKey - b.chunkKey).map((e) => ({ ...e, vector: [...e.vector] }));
}

/**
 * The conformance suite of the DocumentStore port: documents with versions (a change supersedes the live
 * version, an identical re-upsert writes nothing, a delete supersedes without successor, 16 superseded
 * versions retained per document), chunk keys never reused, the generation (monotonic, bumped by every
 * committed write), whole-or-nothing batches, reindexing (incremental never drops, full wipes stray
 * keyword rows), getChunks and iterateVectors. Every call is awaited, so a synchronous and an
 * asynchronous adapter run the same tests.
 */
export function runDocumentStoreSuite(opts: DocumentStoreSuiteOptions): void {
  const skip: Record<string, string> = { ...opts.skip };
  if (!opts.nativeKeywordIndex) {
    for (const t of KEYWORD_TESTS) skip[t] ??= "the store keeps no keyword index of its own (keyword search runs on the in-memory BM25)";
  }
  conformanceSuite("DocumentStore", { ...opts, skip }, (test) => {
    let h: DocumentStoreHarness;
    let store: DocumentStore;
    beforeEach(async () => {
      h = await opts.create();
      store = h.store;
    });
    afterEach(async () => {
      await h.close();
    });

    async function vectors(resourceId?: string): Promise<VectorEntry[]> {
      const out: VectorEntry[] = [];
      for await (const e of store.iterateVectors()) if (resourceId === undefined || e.resourceId === resourceId) out.push(e);
      return out;
    }
    async function chunks(keys: readonly number[]): Promise<Map<number, ChunkRecord>> {
      return store.getChunks(keys);
    }

    test("eraseResourceSlice erases every version of a resource in slices, its vectors reported, and nothing of another", async () => {
      const first = await store.upsertDocuments(R1, [doc("a.md", ["one", "two"]), doc("b.md", ["three"], { embed: false })], T0);
      await store.upsertDocuments(R1, [doc("a.md", ["one changed"])], T0 + 1);
      await store.deleteDocuments(R1, ["b.md"], T0 + 2);
      const kept = await store.upsertDocuments(R2, [doc("keep.md", ["kept"])], T0);
      const before = await store.generation();
      const totals = { documents: 0, chunks: 0, vectors: 0, removed: [] as number[] };
      let slices = 0;
      for (;;) {
        const slice = await store.eraseResourceSlice(R1, 1);
        slices += 1;
        totals.documents += slice.documents;
        totals.chunks += slice.chunks;
        totals.vectors += slice.vectors;
        totals.removed.push(...slice.changes.removed);
        expect(slice.generation).toBe(await store.generation());
        if (slice.done) break;
      }
      expect({ documents: totals.documents, chunks: totals.chunks, vectors: totals.vectors }).toEqual({
        documents: 3,
        chunks: 4,
        vectors: 3,
      });
      expect(slices).toBeGreaterThan(1);
      expect(sorted(totals.removed)).toEqual(expect.arrayContaining(sorted(first.vectors.added.map((e) => e.chunkKey))));
      expect(await store.generation()).toBeGreaterThan(before);
      expect((await chunks(first.vectors.added.map((e) => e.chunkKey))).size).toBe(0);
      expect(await vectors(R1)).toEqual([]);
      expect((await chunks(kept.vectors.added.map((e) => e.chunkKey))).size).toBe(1);
      expect((await store.eraseResourceSlice(R1, 10)).documents).toBe(0);
      await store.reclaimSpace();
    });

    test("a new document is stored with its chunks; getChunks answers each key with the document's metadata and URI", async () => {
      const a = doc("docs/a.md", ["alpha one", "alpha two"], { metadata: { lang: "en", owner: "team-a" } });
      const b = doc("b.txt", ["no vector here"], { embed: false });
      const out = await store.upsertDocuments(R1, [a, b], T0);
      expect(out).toMatchObject({ documentsUpserted: 2, documentsUnchanged: 0, chunksIndexed: 3, vectorsIndexed: 2 });
      expect(out.generation).toBe(await store.generation());
      expect(out.vectors.superseded).toEqual([]);
      expect(out.vectors.removed).toEqual([]);
      expect(out.vectors.at).toBe(T0);
      expect(out.vectors.added.map((e) => ({ ...e, vector: [...e.vector] }))).toEqual(
        a.chunks.map((c) => ({
          chunkKey: expect.any(Number),
          resourceId: R1,
          path: "docs/a.md",
          supersededAt: null,
          vector: [...c.embedding!],
        })),
      );
      const [k0, k1] = out.vectors.added.map((e) => e.chunkKey);
      expect(k0).not.toBe(k1);
      const got = await chunks([k1, k0, 987_654_321]);
      expect(got.size).toBe(2);
      expect(got.get(k0)).toEqual({
        chunkKey: k0,
        resourceId: R1,
        path: "docs/a.md",
        chunkIndex: 0,
        text: "alpha one",
        metadata: { lang: "en", owner: "team-a" },
        supersededAt: null,
        ukoUri: `uko://${R1}/docs/a.md#0`,
      });
      expect(got.get(k1)).toMatchObject({ chunkIndex: 1, text: "alpha two", ukoUri: `uko://${R1}/docs/a.md#1` });
      expect((await chunks([])).size).toBe(0);
      expect(byKey(await vectors())).toEqual(byKey(out.vectors.added));
    });

    test("a changed document supersedes its live version: the old chunks stay, stamped with the time of the change", async () => {
      const v1 = await store.upsertDocuments(R1, [doc("a.md", ["first one", "first two"])], T0);
      const old = v1.vectors.added.map((e) => e.chunkKey);
      const v2 = await store.upsertDocuments(R1, [doc("a.md", ["second"])], T0 + 1_000);
      expect(v2).toMatchObject({ documentsUpserted: 1, documentsUnchanged: 0, chunksIndexed: 1, vectorsIndexed: 1 });
      expect(sorted(v2.vectors.superseded)).toEqual(sorted(old));
      expect(v2.vectors.at).toBe(T0 + 1_000);
      const fresh = v2.vectors.added[0].chunkKey;
      expect(old).not.toContain(fresh);
      const got = await chunks([...old, fresh]);
      for (const k of old) expect(got.get(k)).toMatchObject({ supersededAt: T0 + 1_000, path: "a.md" });
      expect(got.get(fresh)).toMatchObject({ supersededAt: null, text: "second", chunkIndex: 0 });
      expect((await vectors()).map((e) => [e.chunkKey, e.supersededAt]).sort((x, y) => Number(x[0]) - Number(y[0]))).toEqual([
        ...sorted(old).map((k) => [k, T0 + 1_000]),
        [fresh, null],
      ]);
    });

    test("a change of metadata alone, or of an embedding alone, is a change", async () => {
      const base = doc("a.md", ["same text"], { metadata: { v: "1" } });
      await store.upsertDocuments(R1, [base], T0);
      const meta = await store.upsertDocuments(R1, [{ ...base, metadata: { v: "2" } }], T0 + 1);
      expect(meta.documentsUpserted).toBe(1);
      const emb = await store.upsertDocuments(
        R1,
        [{ ...base, metadata: { v: "2" }, chunks: [{ text: "same text", embedding: embedding() }] }],
        T0 + 2,
      );
      expect(emb.documentsUpserted).toBe(1);
      expect(emb.vectors.superseded).toEqual(meta.vectors.added.map((e) => e.chunkKey));
      const live = (await chunks(emb.vectors.added.map((e) => e.chunkKey))).get(emb.vectors.added[0].chunkKey);
      expect(live?.metadata).toEqual({ v: "2" });
    });

    test("an identical re-upsert is a no-op: nothing written, the generation unchanged", async () => {
      const a = doc("a.md", ["kept one", "kept two"], { metadata: { x: "1", y: "2" } });
      const first = await store.upsertDocuments(R1, [a], T0);
      const before = await vectors();
      const again = await store.upsertDocuments(R1, [{ ...a, metadata: { y: "2", x: "1" } }], T0 + 5_000);
      expect(again).toMatchObject({
        documentsUpserted: 0,
        documentsUnchanged: 1,
        chunksIndexed: 0,
        vectorsIndexed: 0,
        generation: first.generation,
      });
      expect(again.vectors).toMatchObject({ added: [], superseded: [], removed: [] });
      expect(await store.generation()).toBe(first.generation);
      expect(byKey(await vectors())).toEqual(byKey(before));
      const mixed = await store.upsertDocuments(R1, [a, doc("b.md", ["new"])], T0 + 6_000);
      expect(mixed).toMatchObject({ documentsUpserted: 1, documentsUnchanged: 1, chunksIndexed: 1 });
      expect(mixed.generation > first.generation).toBe(true);
    });

    test("a delete supersedes the live version without a successor; nothing live, nothing deleted", async () => {
      const a = await store.upsertDocuments(R1, [doc("a.md", ["gone soon"]), doc("b.md", ["stays"])], T0);
      const [ka, kb] = a.vectors.added.map((e) => e.chunkKey);
      const del = await store.deleteDocuments(R1, ["a.md", "a.md", "missing.md"], T0 + 2_000);
      expect(del.deleted).toBe(1);
      expect(del.generation > a.generation).toBe(true);
      expect(del.generation).toBe(await store.generation());
      expect(del.vectors).toEqual({ added: [], superseded: [ka], removed: [], at: T0 + 2_000 });
      const got = await chunks([ka, kb]);
      expect(got.get(ka)?.supersededAt).toBe(T0 + 2_000);
      expect(got.get(kb)?.supersededAt).toBeNull();
      expect((await vectors()).find((e) => e.chunkKey === ka)?.supersededAt).toBe(T0 + 2_000);
      const twice = await store.deleteDocuments(R1, ["a.md"], T0 + 3_000);
      expect(twice.deleted).toBe(0);
      expect(twice.vectors).toMatchObject({ added: [], superseded: [], removed: [] });
      expect((await store.deleteDocuments(R2, ["b.md"], T0 + 3_000)).deleted).toBe(0);
      expect((await chunks([kb])).get(kb)?.supersededAt).toBeNull();
      const back = await store.upsertDocuments(R1, [doc("a.md", ["gone soon"])], T0 + 4_000);
      expect(back).toMatchObject({ documentsUpserted: 1, documentsUnchanged: 0 });
      expect(back.vectors.superseded).toEqual([]);
    });

    test("counts are of live documents and their chunks: superseded, deleted and rejected writes count nothing", async () => {
      expect(await store.counts()).toEqual({ documents: 0, chunks: 0 });
      await store.upsertDocuments(R1, [doc("a.md", ["one", "two"]), doc("b.md", ["three"], { embed: false })], T0);
      await store.upsertDocuments(R2, [doc("a.md", ["other resource"])], T0);
      expect(await store.counts()).toEqual({ documents: 3, chunks: 4 });
      // A change supersedes the two chunks of a.md with three new ones.
      await store.upsertDocuments(R1, [doc("a.md", ["one", "two", "and three"])], T0 + 1_000);
      expect(await store.counts()).toEqual({ documents: 3, chunks: 5 });
      await store.upsertDocuments(R1, [doc("b.md", ["three"], { embed: false })], T0 + 2_000);
      expect(await store.counts()).toEqual({ documents: 3, chunks: 5 });
      await store.deleteDocuments(R1, ["b.md"], T0 + 3_000);
      expect(await store.counts()).toEqual({ documents: 2, chunks: 4 });
      await rejection(() => store.upsertDocuments(R1, [doc("c.md", ["new"]), unreadable("d.md")], T0 + 4_000));
      expect(await store.counts()).toEqual({ documents: 2, chunks: 4 });
      await store.reindexResource(R1, true);
      expect(await store.counts()).toEqual({ documents: 2, chunks: 4 });
    });

    test("retention: a document keeps its live version and 16 superseded ones; older versions are dropped with their vectors", async () => {
      const keys: number[] = [];
      for (let i = 0; i <= RETAINED + 2; i++) {
        const out = await store.upsertDocuments(R1, [doc("a.md", [`version ${i}`])], T0 + i * 1_000);
        keys.push(out.vectors.added[0].chunkKey);
        if (i <= RETAINED) expect(out.vectors.removed).toEqual([]);
        else expect(out.vectors.removed).toEqual([keys[i - RETAINED - 1]]);
      }
      await store.upsertDocuments(R1, [doc("other.md", ["another document keeps its own versions"])], T0);
      const kept = keys.slice(2);
      const got = await chunks(keys);
      expect(sorted([...got.keys()])).toEqual(sorted(kept));
      expect(got.get(keys[keys.length - 1])?.supersededAt).toBeNull();
      expect(got.get(keys[2])?.supersededAt).toBe(T0 + 3_000);
      expect(sorted((await vectors()).filter((e) => e.path === "a.md").map((e) => e.chunkKey))).toEqual(sorted(kept));
      // A delete supersedes the live version, so the oldest retained one goes.
      const del = await store.deleteDocuments(R1, ["a.md"], T0 + 60_000);
      expect(del.vectors.removed).toEqual([keys[2]]);
      expect((await vectors()).filter((e) => e.path === "a.md")).toHaveLength(RETAINED);
      expect((await vectors()).filter((e) => e.path === "other.md")).toHaveLength(1);
      // Keys of dropped versions are never handed out again.
      const next = await store.upsertDocuments(R1, [doc("a.md", ["version after the delete"])], T0 + 61_000);
      expect(keys).not.toContain(next.vectors.added[0].chunkKey);
    });

    test("the generation is monotonic and bumped by every committed write, and each outcome reports it", async () => {
      const gens: bigint[] = [await store.generation()];
      const step = async (g: bigint | Promise<bigint>) => {
        const value = await g;
        expect(typeof value).toBe("bigint");
        expect(value > gens[gens.length - 1]).toBe(true);
        expect(await store.generation()).toBe(value);
        gens.push(value);
      };
      await step((await store.upsertDocuments(R1, [doc("a.md", ["one"])], T0)).generation);
      await step((await store.upsertDocuments(R1, [doc("a.md", ["two"])], T0 + 1)).generation);
      await step((await store.upsertDocuments(R2, [doc("b.md", ["three"], { embed: false })], T0 + 2)).generation);
      await step((await store.deleteDocuments(R1, ["a.md"], T0 + 3)).generation);
      await step((await store.reindexResource(R1, false)).generation);
      await step((await store.reindexResource(R2, true)).generation);
      await step(store.bumpGeneration());
      await step((await store.upsertDocuments(R1, [doc("a.md", ["four"])], T0 + 4)).generation);
    });

    test("a rejected batch writes nothing: no document, no supersession, no vector, the same generation", async () => {
      const seeded = await store.upsertDocuments(R1, [doc("a.md", ["original"])], T0);
      const original = seeded.vectors.added.map((e) => e.chunkKey);
      const before = await vectors();
      const err = await rejection(() =>
        store.upsertDocuments(R1, [doc("a.md", ["changed"]), doc("new.md", ["brand new"]), unreadable("bad.md")], T0 + 1_000),
      );
      expect(err).toBeInstanceOf(Error);
      expect(await store.generation()).toBe(seeded.generation);
      expect(byKey(await vectors())).toEqual(byKey(before));
      expect((await chunks(original)).get(original[0])?.supersededAt).toBeNull();
      // The store is still usable, and a.md's live version is still the original one.
      const after = await store.upsertDocuments(R1, [doc("a.md", ["changed"])], T0 + 2_000);
      expect(after.vectors.superseded).toEqual(original);
      expect(after.generation > seeded.generation).toBe(true);
    });

    test("incremental reindex never drops: every retained version is re-indexed and still served", async () => {
      await store.upsertDocuments(
        R1,
        [doc("a.md", ["a first", "a first again"]), doc("b.md", ["b only"]), doc("c.md", ["no vectors"], { embed: false })],
        T0,
      );
      await store.upsertDocuments(R1, [doc("a.md", ["a second"])], T0 + 1_000);
      await store.deleteDocuments(R1, ["b.md"], T0 + 2_000);
      await store.upsertDocuments(R2, [doc("x.md", ["elsewhere"])], T0);
      const all = await vectors();
      const keys = all.map((e) => e.chunkKey);
      const chunksBefore = await chunks(keys);
      const out = await store.reindexResource(R1, false);
      // a.md twice (live and superseded), b.md once (deleted), c.md once.
      expect(out.documents).toBe(4);
      expect(out.chunks).toBe(5);
      expect(byKey(out.vectors)).toEqual(byKey(all.filter((e) => e.resourceId === R1)));
      expect(byKey(await vectors())).toEqual(byKey(all));
      expect(await chunks(keys)).toEqual(chunksBefore);
      const full = await store.reindexResource(R1, true);
      expect({ documents: full.documents, chunks: full.chunks }).toEqual({ documents: 4, chunks: 5 });
      expect(byKey(full.vectors)).toEqual(byKey(out.vectors));
      expect(full.generation > out.generation).toBe(true);
      expect(byKey(await vectors())).toEqual(byKey(all));
      expect(await chunks(keys)).toEqual(chunksBefore);
      expect(await store.reindexResource("01JD0C0000000000000000000Z", false)).toMatchObject({ documents: 0, chunks: 0, vectors: [] });
    });

    test(KEYWORD_TESTS[0], async () => {
      const view = testView([R1], { temporal: "all" });
      const search = async (q: string) => (await h.text!.search(view, q, searchOpts)).hits.map((x) => x.chunkKey);
      const ok = await store.upsertDocuments(R1, [doc("a.md", ["the zebra grazes"])], T0);
      expect(await search("zebra")).toEqual(ok.vectors.added.map((e) => e.chunkKey));
      await rejection(() =>
        store.upsertDocuments(R1, [doc("b.md", ["a quokka smiles"]), doc("a.md", ["the zebra sleeps"]), unreadable("bad.md")], T0 + 1),
      );
      expect(await search("quokka")).toEqual([]);
      expect(await search("sleeps")).toEqual([]);
      expect(await search("zebra")).toEqual(ok.vectors.added.map((e) => e.chunkKey));
    });

    test(KEYWORD_TESTS[1], async () => {
      const view = testView([R1]);
      const scores = async () => (await h.text!.search(view, "needle", searchOpts)).hits.map((x) => [x.chunkKey, x.score]);
      const hay = Array.from({ length: 12 }, (_, i) => doc(`hay/${i}.md`, [`only hay and straw, bale ${i}`]));
      await store.upsertDocuments(R1, [doc("a.md", ["a needle in the hay"]), doc("b.md", ["needle and needle and thread"]), ...hay], T0);
      const clean = await scores();
      expect(clean).toHaveLength(2);
      for (let i = 0; i < 5; i++) await h.addStrayKeywordRow!(R1, "needle needle needle stray");
      const skewed = await scores();
      // The stray rows weigh in the term statistics (else this test could not tell a wipe from none).
      expect(skewed.map((x) => x[0])).toEqual(clean.map((x) => x[0]));
      expect(skewed).not.toEqual(clean);
      await store.reindexResource(R1, false);
      expect((await scores()).map((x) => x[0])).toEqual(clean.map((x) => x[0]));
      await store.reindexResource(R1, true);
      const wiped = await scores();
      expect(wiped.map((x) => x[0])).toEqual(clean.map((x) => x[0]));
      wiped.forEach(([, s], i) => expect(s).toBeCloseTo(clean[i][1], 12));
    });

    test(RESTART_TEST, async () => {
      if (!h.reopen) throw new Error(`no reopen in the harness: skip "${RESTART_TEST}" with a reason`);
      await store.upsertDocuments(R1, [doc("a.md", ["one"])], T0);
      const v2 = await store.upsertDocuments(R1, [doc("a.md", ["two"])], T0 + 1);
      const all = await vectors();
      const keys = all.map((e) => e.chunkKey);
      const kept = await chunks(keys);
      store = await h.reopen();
      expect(await store.generation()).toBe(v2.generation);
      expect(byKey(await vectors())).toEqual(byKey(all));
      expect(await chunks(keys)).toEqual(kept);
      const v3 = await store.upsertDocuments(R1, [doc("a.md", ["three"])], T0 + 2);
      expect(v3.generation > v2.generation).toBe(true);
      expect(keys).not.toContain(v3.vectors.added[0].chunkKey);
      expect(sorted(v3.vectors.superseded)).toEqual(v2.vectors.added.map((e) => e.chunkKey));
    });

    test("chunks stored without an embedding are listed in key order and take one later, of their resource only", async () => {
      const a1 = await store.upsertDocuments(R1, [doc("a.md", ["one", "two", "three"], { embed: false })], T0);
      await store.upsertDocuments(R1, [doc("a.md", ["one changed", "two"], { embed: false })], T0 + 1);
      await store.upsertDocuments(R1, [doc("v.md", ["has a vector"])], T0);
      await store.upsertDocuments(R2, [doc("o.md", ["of another resource"], { embed: false })], T0);
      // Live and retained superseded versions alike, never one with an embedding, never another resource's.
      const all = await store.chunksWithoutVector(R1, 0, 100);
      expect(all.map((c) => c.text)).toEqual(["one", "two", "three", "one changed", "two"]);
      const keys = all.map((c) => c.chunkKey);
      expect(keys).toEqual(sorted(keys));
      // Paged by key.
      const page1 = await store.chunksWithoutVector(R1, 0, 2);
      const page2 = await store.chunksWithoutVector(R1, page1[1].chunkKey, 2);
      expect([...page1, ...page2].map((c) => c.chunkKey)).toEqual(keys.slice(0, 4));
      const before = await store.generation();
      const otherKey = (await store.chunksWithoutVector(R2, 0, 10))[0].chunkKey;
      const given = keys.map((chunkKey) => ({ chunkKey, vector: embedding() }));
      const stored = await store.setChunkVectors(R1, [...given.slice(0, 3), { chunkKey: otherKey, vector: embedding() }]);
      expect(stored.generation > before).toBe(true);
      // Another resource's key is skipped; the superseded version's entry says when it was superseded.
      expect(stored.added.map((e) => e.chunkKey)).toEqual(keys.slice(0, 3));
      expect(stored.added.map((e) => e.supersededAt)).toEqual([T0 + 1, T0 + 1, T0 + 1]);
      expect(stored.added.every((e) => e.resourceId === R1 && e.path === "a.md")).toBe(true);
      expect((await store.chunksWithoutVector(R1, 0, 100)).map((c) => c.chunkKey)).toEqual(keys.slice(3));
      expect((await store.chunksWithoutVector(R2, 0, 100)).map((c) => c.chunkKey)).toEqual([otherKey]);
      // Stored for good: the vectors are served, and a key that has one by now is not overwritten.
      const again = await store.setChunkVectors(R1, [{ chunkKey: keys[0], vector: embedding() }, ...given.slice(3)]);
      expect(again.added.map((e) => e.chunkKey)).toEqual(keys.slice(3));
      expect(again.added.every((e) => e.supersededAt === null)).toBe(true);
      const held = new Map((await vectors(R1)).map((e) => [e.chunkKey, e]));
      for (const g of given) expect(Array.from(held.get(g.chunkKey)!.vector)).toEqual(Array.from(g.vector));
      expect(await store.chunksWithoutVector(R1, 0, 100)).toEqual([]);
      expect(a1.vectors.added).toEqual([]);
    });
  });
}
