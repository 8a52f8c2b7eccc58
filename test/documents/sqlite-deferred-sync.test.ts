import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import type { DocumentInputRecord } from "../../src/ports/document-store.js";

/**
 * Upserts with `deferDurability` (the messages of one UpsertDocuments stream) commit and are visible at
 * once, and one `syncWrites()` makes all of them durable with one fsync of the WAL (issue 29, ingest speed:
 * each message was an fsync of its own). What a crash keeps is tested on a real server killed with -9
 * (test/robustness/upload-crash.test.ts).
 */
const R = "01JD0C00000000000000000002";
const T0 = 1_700_000_000_000;

function doc(path: string, text = path): DocumentInputRecord {
  return { path, content: text, metadata: {}, chunks: [{ text, embedding: Float32Array.from([1, 2, 3]) }] };
}

let dir: string;
let db: SqliteDatabase;
let store: SqliteDocumentStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acms-deferred-sync-"));
  db = openSqliteDatabase(join(dir, "acms.db"));
  store = new SqliteDocumentStore(db);
});
afterEach(async () => {
  await store.close();
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("deferred durability on a file database", () => {
  it("ten deferred messages are visible as they commit and made durable by one fsync", async () => {
    let generation = await store.generation();
    for (let m = 0; m < 10; m++) {
      const out = await store.upsertDocuments(R, [doc(`m${m}/a.md`), doc(`m${m}/b.md`)], T0 + m, { deferDurability: true });
      expect(out.documentsUpserted).toBe(2);
      expect(out.generation).toBeGreaterThan(generation);
      generation = out.generation;
      // Visible at once, as a message always was (the publish is committed; only its fsync waits).
      expect((await store.counts()).documents).toBe(2 * (m + 1));
    }
    const chunks = await store.getChunks(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(chunks.size).toBe(20);
    expect(store.walSyncs).toBe(0);
    await store.syncWrites();
    expect(store.walSyncs).toBe(1);
    // Nothing new: nothing to sync.
    await store.syncWrites();
    expect(store.walSyncs).toBe(1);
  });

  it("a write without deferDurability commits durably on its own and leaves the stream's sync alone", async () => {
    await store.upsertDocuments(R, [doc("a.md")], T0);
    await store.syncWrites();
    expect(store.walSyncs).toBe(0);
    await store.upsertDocuments(R, [doc("b.md")], T0 + 1, { deferDurability: true });
    await store.upsertDocuments(R, [doc("a.md", "a changed")], T0 + 2, { deferDurability: true });
    await store.syncWrites();
    expect(store.walSyncs).toBe(1);
    expect((await store.counts()).documents).toBe(2);
  });

  it("what deferred messages published is there when the database is opened again", async () => {
    for (let m = 0; m < 5; m++) await store.upsertDocuments(R, [doc(`m${m}.md`)], T0 + m, { deferDurability: true });
    await store.upsertDocuments(R, [doc("m0.md", "m0 again")], T0 + 9, { deferDurability: true });
    await store.syncWrites();
    await store.close();
    db.close();
    db = openSqliteDatabase(join(dir, "acms.db"));
    store = new SqliteDocumentStore(db);
    expect(await store.counts()).toEqual({ documents: 5, chunks: 5 });
    const vectors = [];
    for await (const e of store.iterateVectors()) vectors.push([e.path, e.supersededAt]);
    expect(vectors).toEqual([
      ["m0.md", T0 + 9],
      ["m1.md", null],
      ["m2.md", null],
      ["m3.md", null],
      ["m4.md", null],
      ["m0.md", null],
    ]);
  });
});
