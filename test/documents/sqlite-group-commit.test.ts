import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import type { DocumentInputRecord, UpsertOutcome } from "../../src/ports/document-store.js";

/**
 * Group commit of small messages (issue 29, ingest): messages without vectors that fit one staging slice,
 * written by different callers in the same event-loop turn while the caller says other writes are under way
 * (`groupCommit`: several UpsertDocuments streams), commit in one transaction, as many as fit one slice. Each
 * still answers for itself: its own counts, and a failure of its own alone (the group is written again a
 * message at a time). A lone writer commits at once.
 */
const T0 = 1_700_000_000_000;
const rid = (n: number) => `01JD0G${String(n).padStart(20, "0")}`;
const GROUP = { groupCommit: true, deferDurability: true } as const;

function doc(path: string, text = `words of ${path}`): DocumentInputRecord {
  return { path, content: text, metadata: {}, chunks: [{ text }] };
}

let dir: string;
let db: SqliteDatabase;
let store: SqliteDocumentStore;

function open(opts: { stageBatchChunks?: number } = {}): void {
  db = openSqliteDatabase(join(dir, "acms.db"));
  store = new SqliteDocumentStore(db, opts);
}

function liveRows(resourceId: string): string[] {
  return db
    .prepare<[string], { path: string }>("SELECT path FROM documents WHERE resource_id = ? AND superseded_at IS NULL ORDER BY path")
    .all(resourceId)
    .map((r) => r.path);
}

function keywordRows(): number {
  return (db.prepare("SELECT COUNT(*) AS n FROM chunks_fts").get() as { n: number }).n;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acms-group-commit-"));
});
afterEach(async () => {
  await store.close();
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("group commit of small one-step writes (SQLite store)", () => {
  it("writes of different resources made in one turn commit together: one generation, every row, each its own counts", async () => {
    open();
    const before = await store.generation();
    const outs = await Promise.all([0, 1, 2, 3].map((n) => store.upsertDocuments(rid(n), [doc("a.md"), doc(`b${n}.md`)], T0, GROUP)));
    const generations = new Set(outs.map((o) => o.generation));
    expect(generations.size).toBe(1);
    expect([...generations][0]).toBe(before + 1n);
    for (const o of outs) {
      expect(o.documentsUpserted).toBe(2);
      expect(o.chunksIndexed).toBe(2);
    }
    for (const n of [0, 1, 2, 3]) expect(liveRows(rid(n))).toEqual(["a.md", `b${n}.md`]);
    expect(keywordRows()).toBe(8);
    expect(await store.counts()).toEqual({ documents: 8, chunks: 8 });
    // Unchanged documents are counted as such, in a group too.
    const again = await Promise.all([0, 1].map((n) => store.upsertDocuments(rid(n), [doc("a.md")], T0 + 1, GROUP)));
    expect(again.map((o) => [o.documentsUpserted, o.documentsUnchanged])).toEqual([
      [0, 1],
      [0, 1],
    ]);
  });

  it("a group holds no more chunks than one staging slice: the rest commit in the next turns", async () => {
    open({ stageBatchChunks: 4 });
    const outs = await Promise.all([0, 1, 2, 3, 4, 5].map((n) => store.upsertDocuments(rid(n), [doc("a.md")], T0, GROUP)));
    const byGeneration = new Map<bigint, number>();
    for (const o of outs) byGeneration.set(o.generation, (byGeneration.get(o.generation) ?? 0) + 1);
    expect([...byGeneration.values()]).toEqual([4, 2]);
    expect(await store.counts()).toEqual({ documents: 6, chunks: 6 });
  });

  it("a message that fails inside its group fails alone: the others commit, nothing of it remains", async () => {
    open();
    // A document the database refuses (as a full disk or a constraint would): the group's transaction fails.
    db.exec(
      "CREATE TRIGGER refuse_poison BEFORE INSERT ON documents WHEN NEW.path = 'poison.md' BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    const settled = await Promise.allSettled([
      store.upsertDocuments(rid(0), [doc("a.md")], T0, GROUP),
      store.upsertDocuments(rid(1), [doc("ok.md"), doc("poison.md")], T0, GROUP),
      store.upsertDocuments(rid(2), [doc("c.md")], T0, GROUP),
    ]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((settled[1] as PromiseRejectedResult).reason)).toContain("refused");
    expect(liveRows(rid(0))).toEqual(["a.md"]);
    expect(liveRows(rid(1))).toEqual([]);
    expect(liveRows(rid(2))).toEqual(["c.md"]);
    expect(keywordRows()).toBe(2);
    expect(await store.counts()).toEqual({ documents: 2, chunks: 2 });
    const generations = settled
      .filter((s) => s.status === "fulfilled")
      .map((s) => (s as PromiseFulfilledResult<UpsertOutcome>).value.generation);
    expect(generations[1]).toBeGreaterThan(generations[0]);
  });

  it("without groupCommit each write commits at once, on its own", async () => {
    open();
    const before = await store.generation();
    const outs = await Promise.all([0, 1, 2].map((n) => store.upsertDocuments(rid(n), [doc("a.md")], T0, { deferDurability: true })));
    expect(outs.map((o) => o.generation)).toEqual([before + 1n, before + 2n, before + 3n]);
  });

  it("a hook that throws after the commit rejects its own message only, and nothing is written twice", async () => {
    open();
    const settled = await Promise.allSettled([
      store.upsertDocuments(rid(0), [doc("a.md")], T0, {
        ...GROUP,
        afterPublish: () => {
          throw new Error("hook failed");
        },
      }),
      store.upsertDocuments(rid(1), [doc("b.md")], T0, GROUP),
    ]);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "fulfilled"]);
    const versions = db.prepare("SELECT resource_id, path FROM documents ORDER BY resource_id").all();
    expect(versions).toEqual([
      { resource_id: rid(0), path: "a.md" },
      { resource_id: rid(1), path: "b.md" },
    ]);
    expect(keywordRows()).toBe(2);
  });

  it("close writes what is still waiting for its group before it lets go", async () => {
    open();
    const pending = store.upsertDocuments(rid(7), [doc("late.md")], T0, GROUP);
    await store.close();
    expect((await pending).documentsUpserted).toBe(1);
    db.close();
    open();
    expect(liveRows(rid(7))).toEqual(["late.md"]);
  });
});
