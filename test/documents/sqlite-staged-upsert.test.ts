import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Fts5TextBackend } from "../../src/adapters/sqlite/fts5-text-backend.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { SqliteUnitReader } from "../../src/adapters/sqlite/sqlite-unit-reader.js";
import type { DocumentInputRecord } from "../../src/ports/document-store.js";
import { testView } from "../text/text-corpus.js";

/**
 * The SQLite store stages a large UpsertDocuments message over many transactions (one chunk each here),
 * publishes it in one small one and settles it over many again: these tests hold it to the message's
 * atomicity while it is staged and while it is settled, and across a crash in either.
 */
const R = "01JD0C00000000000000000001";
const T0 = 1_700_000_000_000;
const opts = { maxResults: 100, now: T0 + 10, recentWindowMs: 60_000 };
const visibility = { temporal: "current" as const, now: T0 + 10, recentWindowMs: 60_000 };

function doc(path: string, text: string): DocumentInputRecord {
  return { path, content: text, metadata: {}, chunks: [{ text, embedding: Float32Array.from([1, 2, 3]) }] };
}

/** A message of `n` new documents (all holding "zebra") that also replaces `keep.md` (its new version holds "zebra" too). */
function message(n: number): DocumentInputRecord[] {
  return [doc("keep.md", "keep new zebra"), ...Array.from({ length: n }, (_, i) => doc(`new/${i}.md`, `zebra number ${i}`))];
}

let dir: string;
let file: string;
let db: SqliteDatabase;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acms-staged-"));
  file = join(dir, "acms.db");
  db = openSqliteDatabase(file);
});
afterEach(() => {
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("a message staged over many transactions", () => {
  it("is seen by concurrent searches, fetches and vector loads whole or not at all", async () => {
    const store = new SqliteDocumentStore(db, { stageBatchChunks: 1 });
    const text = new Fts5TextBackend(db);
    const units = new SqliteUnitReader(db);
    await store.upsertDocuments(R, [doc("keep.md", "keep old zebra")], T0);
    const seen: string[] = [];
    let done = false;
    // Probes run on every event-loop turn while the message is staged, as other callers' calls would.
    const probe = async (): Promise<void> => {
      const { hits } = await text.search(testView([R]), "zebra", opts);
      const paths = hits.map((h) => h.path).sort();
      const [unit] = await units.readUnits([{ resourceId: R, path: "keep.md" }], visibility);
      const vectors: string[] = [];
      for await (const v of store.iterateVectors()) if (v.supersededAt === null) vectors.push(v.path);
      const snapshot = await units.snapshotChunks();
      const live = snapshot.chunks.filter((c) => c.supersededAt === null).length;
      seen.push(`${paths.length}:${unit?.content}:${vectors.length}:${live}:${snapshot.generation}:${await store.generation()}`);
    };
    const probing = (async () => {
      while (!done) {
        await new Promise((resolve) => setImmediate(resolve));
        await probe();
      }
    })();
    const outcome = await store.upsertDocuments(R, message(12), T0 + 1);
    done = true;
    await probing;
    await probe();
    expect(outcome.documentsUpserted).toBe(13);
    const before = `1:keep old zebra:1:1:1:1`;
    const after = `13:keep new zebra:13:13:2:2`;
    // Several probes ran while the 13 staging transactions committed, and every one saw one side only.
    expect(seen.filter((s) => s === before).length).toBeGreaterThan(1);
    expect(new Set(seen)).toEqual(new Set([before, after]));
    expect(seen[seen.length - 1]).toBe(after);
  });

  it("is published by one small commit and settled over many turns, seen whole by every probe meanwhile", async () => {
    const store = new SqliteDocumentStore(db, { stageBatchChunks: 1 });
    const text = new Fts5TextBackend(db);
    const units = new SqliteUnitReader(db);
    await store.upsertDocuments(R, [doc("keep.md", "keep old zebra")], T0);
    const published = () => count("published_stages");
    let settled = false;
    const whilePublished: string[] = [];
    const probe = async (): Promise<void> => {
      if (published() === 0 || settled) return;
      const { hits } = await text.search(testView([R]), "zebra", opts);
      const [unit] = await units.readUnits([{ resourceId: R, path: "keep.md" }], visibility);
      const [old] = await units.readUnits([{ resourceId: R, path: "keep.md" }], { ...visibility, temporal: "all" as const });
      const snapshot = await units.snapshotChunks();
      const live = snapshot.chunks.filter((c) => c.supersededAt === null).length;
      const superseded = snapshot.chunks.filter((c) => c.supersededAt === T0 + 1).length;
      whilePublished.push(`${hits.length}:${unit?.content}:${old?.content}:${live}:${superseded}:${snapshot.generation}`);
    };
    const probing = (async () => {
      while (!settled) {
        await new Promise((resolve) => setImmediate(resolve));
        await probe();
      }
    })();
    const outcome = await store.upsertDocuments(R, message(12), T0 + 1);
    settled = true;
    await probing;
    expect(outcome.documentsUpserted).toBe(13);
    expect(outcome.vectors.superseded).toHaveLength(1);
    // Published before it was settled: several turns ran in between (one settling slice each here), and each
    // saw the whole message with the replaced version superseded at the message's time.
    expect(whilePublished.length).toBeGreaterThan(1);
    expect(new Set(whilePublished)).toEqual(new Set(["13:keep new zebra:keep new zebra:13:1:2"]));
    expect([published(), count("documents WHERE staged IS NOT NULL OR superseded_by IS NOT NULL")]).toEqual([0, 0]);
  });

  it("cut short by a crash once published is whole at the next open, settled", async () => {
    const store = new SqliteDocumentStore(db, { stageBatchChunks: 1 });
    await store.upsertDocuments(R, [doc("keep.md", "keep old zebra")], T0);
    const writing = store.upsertDocuments(R, [...message(12), doc("keep.md", "keep newest zebra")], T0 + 1);
    writing.catch(() => undefined);
    while (count("published_stages") === 0) await new Promise((resolve) => setImmediate(resolve));
    // Published, not yet settled (nor acknowledged): the connection goes away under the writer.
    expect(count("documents WHERE staged IS NOT NULL")).toBeGreaterThan(0);
    db.close();
    await expect(writing).rejects.toThrow();
    db = openSqliteDatabase(file);
    const reopened = new SqliteDocumentStore(db);
    expect([count("published_stages"), count("documents WHERE staged IS NOT NULL OR superseded_by IS NOT NULL")]).toEqual([0, 0]);
    expect(await reopened.generation()).toBe(2n);
    expect(await reopened.counts()).toEqual({ documents: 13, chunks: 13 });
    const { hits } = await new Fts5TextBackend(db).search(testView([R]), "zebra", opts);
    expect(hits.filter((h) => h.path === "keep.md").map((h) => h.chunk?.text)).toEqual(["keep newest zebra"]);
    const versions = db.prepare("SELECT content, superseded_at FROM documents WHERE path = 'keep.md' ORDER BY doc_key").all();
    expect(versions).toEqual([
      { content: "keep old zebra", superseded_at: T0 + 1 },
      { content: "keep new zebra", superseded_at: T0 + 1 },
      { content: "keep newest zebra", superseded_at: null },
    ]);
    // The next write of the resource finds the settled live versions.
    const next = await reopened.upsertDocuments(R, [doc("keep.md", "keep newest zebra"), doc("new/0.md", "zebra again")], T0 + 2);
    expect([next.documentsUnchanged, next.documentsUpserted, next.vectors.superseded.length]).toEqual([1, 1, 1]);
  });

  it("that fails part-way leaves nothing of itself behind, and the store takes writes again", async () => {
    const store = new SqliteDocumentStore(db, { stageBatchChunks: 1 });
    const text = new Fts5TextBackend(db);
    await store.upsertDocuments(R, [doc("keep.md", "keep old zebra")], T0);
    const rows = [count("documents"), count("chunks"), count("chunks_fts")];
    // The engine refuses the 8th document (a chunk with no text breaks a NOT NULL constraint), after 7
    // staging transactions have committed.
    const bad = message(12);
    bad[7] = { ...bad[7], chunks: [{ text: null as unknown as string }] };
    await expect(store.upsertDocuments(R, bad, T0 + 1)).rejects.toThrow();
    expect([count("documents"), count("chunks"), count("chunks_fts")]).toEqual(rows);
    expect(await store.generation()).toBe(1n);
    const { hits } = await text.search(testView([R]), "zebra", opts);
    expect(hits.map((h) => [h.path, h.chunk?.text])).toEqual([["keep.md", "keep old zebra"]]);
    expect(count("documents WHERE superseded_by IS NOT NULL")).toBe(0);
    const outcome = await store.upsertDocuments(R, message(12), T0 + 2);
    expect([outcome.documentsUpserted, outcome.generation]).toEqual([13, 2n]);
  });

  it("cut short by a crash is never visible and is dropped at the next open", async () => {
    const store = new SqliteDocumentStore(db, { stageBatchChunks: 1 });
    await store.upsertDocuments(R, [doc("keep.md", "keep old zebra")], T0);
    const rows = [count("documents"), count("chunks"), count("chunks_fts")];
    const writing = store.upsertDocuments(R, message(12), T0 + 1);
    // Three staging transactions commit, then the connection goes away under the writer (as in a kill -9).
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(count("documents")).toBeGreaterThan(rows[0]);
    db.close();
    await expect(writing).rejects.toThrow();
    db = openSqliteDatabase(file);
    const reopened = new SqliteDocumentStore(db);
    expect([count("documents"), count("chunks"), count("chunks_fts")]).toEqual(rows);
    expect(await reopened.generation()).toBe(1n);
    const { hits } = await new Fts5TextBackend(db).search(testView([R]), "zebra", opts);
    expect(hits.map((h) => h.path)).toEqual(["keep.md"]);
  });
});
