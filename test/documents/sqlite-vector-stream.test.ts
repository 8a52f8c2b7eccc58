import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import type { DocumentInputRecord } from "../../src/ports/document-store.js";

/**
 * The SQLite store streams its vectors at start (row by row on a read connection of its own, not read
 * whole): these tests hold the stream to one committed state while writes commit in the middle of it,
 * and check that a stream given up early leaves no read transaction behind.
 */
const R = "01JD0C00000000000000000002";
const T0 = 1_700_000_000_000;

function doc(path: string): DocumentInputRecord {
  return { path, content: path, metadata: {}, chunks: [{ text: path, embedding: Float32Array.from([1, 2, 3]) }] };
}

let dir: string;
let db: SqliteDatabase;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acms-vector-stream-"));
  db = openSqliteDatabase(join(dir, "acms.db"));
});
afterEach(() => {
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("iterateVectors on a file database", () => {
  it("answers from the state committed when it started, while writes commit in the middle of it", async () => {
    const store = new SqliteDocumentStore(db);
    await store.upsertDocuments(R, ["a.md", "b.md", "c.md"].map(doc), T0);
    const seen: { path: string; supersededAt: number | null }[] = [];
    let wrote = false;
    for await (const e of store.iterateVectors()) {
      seen.push({ path: e.path, supersededAt: e.supersededAt });
      if (!wrote) {
        wrote = true;
        // Both commit on the store's own connection while the stream's statement is still open.
        await store.upsertDocuments(R, [doc("d.md")], T0 + 1);
        expect((await store.deleteDocuments(R, ["c.md"], T0 + 2)).deleted).toBe(1);
      }
    }
    expect(seen).toEqual(["a.md", "b.md", "c.md"].map((path) => ({ path, supersededAt: null })));
    const after: { path: string; supersededAt: number | null }[] = [];
    for await (const e of store.iterateVectors()) after.push({ path: e.path, supersededAt: e.supersededAt });
    expect(after.sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: "a.md", supersededAt: null },
      { path: "b.md", supersededAt: null },
      { path: "c.md", supersededAt: T0 + 2 },
      { path: "d.md", supersededAt: null },
    ]);
  });

  it("closes its read connection when the consumer stops early, so nothing pins the log", async () => {
    const store = new SqliteDocumentStore(db);
    await store.upsertDocuments(R, ["a.md", "b.md"].map(doc), T0);
    for await (const e of store.iterateVectors()) {
      expect(e.path).toBe("a.md");
      break;
    }
    await store.upsertDocuments(R, [doc("c.md")], T0 + 1);
    // A reader still holding a snapshot would keep a truncating checkpoint from completing (busy = 1).
    expect(db.pragma("wal_checkpoint(TRUNCATE)")).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
  });
});
