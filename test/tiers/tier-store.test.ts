import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryTierStore } from "../../src/adapters/tiers/memory-tier-store.js";
import { SqliteFileTierStore } from "../../src/adapters/tiers/sqlite-file-tier-store.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/sqlite/sqlite-database.js";
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

runTierStoreSuite({ name: "SqliteFileTierStore", create: createDurable, reopen: reopenDurable });
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
    expect(coldFiles(s)).toEqual([]);
  });

  test("a crash after writing a cold file but before the catalogue commit leaves the fragment where it was", async () => {
    const s = await createDurable();
    await s.save(record("f", "warm", "warm content"));
    const dir = join(dbs.get(s)!.dir, "cold");
    // What the first half of a warm-to-cold move writes, and a temp file of an interrupted write.
    writeFileSync(join(dir, "0123456789abcdef0123456789abcdef-99.json"), JSON.stringify({ owner: OWNER, id: "f", content: "warm content" }));
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
