import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryTierStore } from "../../src/adapters/memory/memory-tier-store.js";
import { SqliteFileTierStore } from "../../src/adapters/sqlite/sqlite-file-tier-store.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import type { TierStore } from "../../src/ports/tier-store.js";
import { OWNER, record, runTierStoreSuite } from "./tier-store-suite.js";

const dirs: string[] = [];
const dbs = new Map<TierStore, { db: SqliteDatabase; dir: string }>();
afterAll(() => {
  for (const { db } of dbs.values()) if (db.open) db.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), "acms-tier-store-"));
  dirs.push(d);
  return d;
}

async function createDurable(): Promise<SqliteFileTierStore> {
  const dir = freshDir();
  const db = openSqliteDatabase(join(dir, "acms.db"));
  const s = new SqliteFileTierStore(db, join(dir, "cold"));
  dbs.set(s, { db, dir });
  return s;
}

async function reopenDurable(store: TierStore): Promise<SqliteFileTierStore> {
  const { db, dir } = dbs.get(store)!;
  await store.close();
  db.close();
  const db2 = openSqliteDatabase(join(dir, "acms.db"));
  const s = new SqliteFileTierStore(db2, join(dir, "cold"));
  dbs.set(s, { db: db2, dir });
  return s;
}

/** Every file of a durable store's directory (its database and its cold files). */
function storeFiles(store: TierStore): string[] {
  const dir = dbs.get(store)!.dir;
  const cold = join(dir, "cold");
  return [
    ...readdirSync(dir)
      .filter((f) => f !== "cold")
      .map((f) => join(dir, f)),
    ...readdirSync(cold).map((f) => join(cold, f)),
  ];
}

runTierStoreSuite({ name: "SqliteFileTierStore", create: createDurable, reopen: reopenDurable, files: storeFiles });
runTierStoreSuite({
  name: "MemoryTierStore",
  create: async () => new MemoryTierStore(),
  skip: { "survives a restart: every fragment, its tier, content and summary": "keeps nothing outside the process by design" },
});

describe("SqliteFileTierStore crash safety", () => {
  const coldFiles = (store: TierStore) => readdirSync(join(dbs.get(store)!.dir, "cold")).sort();

  test("cold content lives in one file per fragment, written atomically (no temp file left)", async () => {
    const s = await createDurable();
    await s.save(record("a", "cold"));
    await s.save(record("b", "warm"));
    expect(coldFiles(s)).toHaveLength(1);
    expect(coldFiles(s)[0]).toMatch(/^[0-9a-f]{32}-\d+\.json$/);
    await s.save(record("a", "hot"));
    await s.sync();
    expect(coldFiles(s)).toEqual([]);
  });

  test("a crash after writing a cold file but before the catalogue commit leaves the fragment where it was", async () => {
    const s = await createDurable();
    await s.save(record("f", "warm", "warm content"));
    const dir = join(dbs.get(s)!.dir, "cold");
    // What the first half of a warm-to-cold move writes, and a temp file of an interrupted write.
    writeFileSync(
      join(dir, "0123456789abcdef0123456789abcdef-99.json"),
      JSON.stringify({ owner: OWNER, id: "f", content: "warm content" }),
    );
    writeFileSync(join(dir, "0123456789abcdef0123456789abcdef-100.json.a1b2c3.tmp"), "{");
    const r = await reopenDurable(s);
    expect((await r.load()).map((f) => [f.id, f.tier])).toEqual([["f", "warm"]]);
    expect(coldFiles(r)).toEqual([]);
    expect((await r.readContents(OWNER, ["f"])).get("f")).toBe("warm content");
  });

  test("a crash after the catalogue commit of a move out of cold, before the file is unlinked, leaves one copy", async () => {
    const s = await createDurable();
    await s.save(record("f", "cold", "the original"));
    const [file] = coldFiles(s);
    const { db, dir } = dbs.get(s)!;
    // The catalogue already says warm (the commit happened); the old file is still there.
    db.prepare(`UPDATE tier_fragments SET tier = 'warm', content = 'the original', cold_file = NULL WHERE id = 'f'`).run();
    expect(readdirSync(join(dir, "cold"))).toEqual([file]);
    const r = await reopenDurable(s);
    expect((await r.load()).map((f) => [f.id, f.tier])).toEqual([["f", "warm"]]);
    expect(coldFiles(r)).toEqual([]);
  });

  test("a cold file removed behind the store's back drops its row at load instead of failing later", async () => {
    const s = await createDurable();
    await s.save(record("gone", "cold"));
    await s.save(record("kept", "cold"));
    const dir = join(dbs.get(s)!.dir, "cold");
    const r0 = await reopenDurable(s);
    const loadedBefore = await r0.load();
    expect(loadedBefore).toHaveLength(2);
    const goneFile = readdirSync(dir).find((f) => (JSON.parse(readFileSync(join(dir, f), "utf8")) as { id: string }).id === "gone")!;
    rmSync(join(dir, goneFile));
    const write = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const r = await reopenDurable(r0);
      expect((await r.load()).map((f) => f.id)).toEqual(["kept"]);
      expect(write).toHaveBeenCalledWith(expect.stringMatching(/cold fragment file\(s\) missing/));
    } finally {
      write.mockRestore();
    }
  });

  test("a cold file holding another fragment is refused, never served", async () => {
    const s = await createDurable();
    await s.save(record("a", "cold", "A"));
    const dir = join(dbs.get(s)!.dir, "cold");
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file), JSON.stringify({ owner: OWNER, id: "b", content: "B" }));
    await expect(s.readContents(OWNER, ["a"])).rejects.toThrow(/holds fragment writer\/b, expected writer\/a/);
  });

  test("a cold file holding another owner's fragment of the same id is refused, never served", async () => {
    const s = await createDurable();
    await s.save(record("a", "cold", "mine"));
    const dir = join(dbs.get(s)!.dir, "cold");
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file), JSON.stringify({ owner: "other", id: "a", content: "theirs" }));
    await expect(s.readContents(OWNER, ["a"])).rejects.toThrow(/holds fragment other\/a, expected writer\/a/);
  });

  test("two owners' cold fragments of the same id get their own files, and a restart serves each its own", async () => {
    const s = await createDurable();
    await s.save(record("plan-1", "cold", "mine", { owner: "writer", accessSeq: 7 }));
    await s.save(record("plan-1", "cold", "theirs", { owner: "other", accessSeq: 7 }));
    expect(coldFiles(s)).toHaveLength(2);
    const r = await reopenDurable(s);
    // Same id and same access number: only the owner tells the two files apart.
    expect((await r.load()).map((f) => [f.owner, f.id, f.tier]).sort()).toEqual([
      ["other", "plan-1", "cold"],
      ["writer", "plan-1", "cold"],
    ]);
    expect(coldFiles(r)).toHaveLength(2);
    expect(await r.readContents("writer", ["plan-1"])).toEqual(new Map([["plan-1", "mine"]]));
    expect(await r.readContents("other", ["plan-1"])).toEqual(new Map([["plan-1", "theirs"]]));
    // Moving one owner's fragment out of cold unlinks its file only.
    await r.save(record("plan-1", "warm", "theirs, warm", { owner: "other" }));
    await r.sync();
    expect(coldFiles(r)).toHaveLength(1);
    expect(await r.readContents("writer", ["plan-1"])).toEqual(new Map([["plan-1", "mine"]]));
  });

  test("a tier_fragments table of the pre-release schema (no owner) is refused with a clear message", () => {
    const dir = freshDir();
    const db = openSqliteDatabase(join(dir, "acms.db"));
    try {
      db.exec(`CREATE TABLE tier_fragments (id TEXT PRIMARY KEY, tier TEXT NOT NULL)`);
      expect(() => new SqliteFileTierStore(db, join(dir, "cold"))).toThrow(/pre-release schema without per-principal owners/);
    } finally {
      db.close();
    }
  });
});

describe("SqliteFileTierStore group commit", () => {
  const coldFiles = (store: TierStore) => readdirSync(join(dbs.get(store)!.dir, "cold")).sort();
  const walOf = (store: TierStore) => join(dbs.get(store)!.dir, "acms.db-wal");

  test("a write is read back at once and leaves a sync to make; after it, nothing is left to sync", async () => {
    const s = await createDurable();
    expect(s.sync()).toBeUndefined();
    await s.save(record("a", "warm", "warm words"));
    expect((await s.readContents(OWNER, ["a"])).get("a")).toBe("warm words");
    const pending = s.sync();
    expect(pending).toBeInstanceOf(Promise);
    await pending;
    expect(s.sync()).toBeUndefined();
    await s.remove(OWNER, "a");
    expect(s.sync()).toBeInstanceOf(Promise);
    await s.sync();
    expect(s.sync()).toBeUndefined();
  });

  test("writes made while a sync runs share the next one: many writers, few fsyncs", async () => {
    const s = await createDurable();
    const before = s.walSyncs;
    const writers = Array.from({ length: 32 }, (_, i) =>
      (async () => {
        await s.save(record(`f${i}`, "warm"));
        await s.sync();
      })(),
    );
    await Promise.all(writers);
    const fsyncs = s.walSyncs - before;
    expect(fsyncs).toBeGreaterThanOrEqual(1);
    expect(fsyncs).toBeLessThanOrEqual(3);
    const r = await reopenDurable(s);
    expect((await r.load()).map((f) => f.id).sort()).toEqual(Array.from({ length: 32 }, (_, i) => `f${i}`).sort());
  });

  test("the cold file a move out of cold replaces is unlinked only once the move's row is durable", async () => {
    const s = await createDurable();
    await s.save(record("f", "cold", "the original"));
    await s.sync();
    const [file] = coldFiles(s);
    await s.save(record("f", "warm", "the original"));
    // Until the sync, a crash of the machine could lose the row that says warm: the cold copy must stay.
    expect(coldFiles(s)).toEqual([file]);
    await s.sync();
    expect(coldFiles(s)).toEqual([]);
    await s.save(record("g", "cold", "to remove"));
    await s.sync();
    await s.remove(OWNER, "g");
    expect(coldFiles(s)).toHaveLength(1);
    await s.sync();
    expect(coldFiles(s)).toEqual([]);
  });

  test("a failed fsync answers an error, keeps the replaced file, and the next sync finishes the work", async () => {
    const s = await createDurable();
    await s.save(record("f", "cold", "the original"));
    const [file] = coldFiles(s);
    await s.save(record("f", "hot", "the original"));
    // The WAL gone from its path when the first sync opens it: the store cannot know its writes reached the disk.
    renameSync(walOf(s), `${walOf(s)}.away`);
    try {
      await expect(s.sync()).rejects.toThrow(/ENOENT/);
      expect(coldFiles(s)).toEqual([file]);
    } finally {
      renameSync(`${walOf(s)}.away`, walOf(s));
    }
    await s.sync();
    expect(coldFiles(s)).toEqual([]);
    expect(s.sync()).toBeUndefined();
  });

  test("close syncs what is left, and a restart finds it", async () => {
    const s = await createDurable();
    await s.save(record("a", "hot", "kept"));
    await s.save(record("b", "cold", "cold kept"));
    const r = await reopenDurable(s);
    expect((await r.load()).map((f) => f.id)).toEqual(["a", "b"]);
    expect(await r.readContents(OWNER, ["b"])).toEqual(new Map([["b", "cold kept"]]));
  });

  test("on a database without a WAL (in memory) each write is durable as committed: nothing to sync", async () => {
    const db = openSqliteDatabase(":memory:");
    const dir = freshDir();
    try {
      const s = new SqliteFileTierStore(db, join(dir, "cold"));
      await s.save(record("f", "cold"));
      expect(s.sync()).toBeUndefined();
      await s.save(record("f", "warm"));
      expect(s.sync()).toBeUndefined();
      expect(readdirSync(join(dir, "cold"))).toEqual([]);
      await s.close();
    } finally {
      db.close();
    }
  });
});
