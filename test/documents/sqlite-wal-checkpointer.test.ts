import { copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { WalCheckpointer } from "../../src/adapters/kit/wal-checkpointer.js";
import { openSqliteCatalog } from "../../src/adapters/sqlite/index.js";
import { withoutFsync } from "../../src/adapters/kit/without-fsync.js";

/**
 * The WAL is checkpointed from a thread of its own: the serving connection never checkpoints inside a commit
 * (its automatic checkpoint is off while the thread runs), the thread copies what was committed into the
 * database file itself, and a stopped or dead thread gives the serving connection its checkpoint back.
 */
describe("WalCheckpointer", () => {
  let dir: string;
  let db: SqliteDatabase;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acms-checkpointer-"));
    db = openSqliteDatabase(join(dir, "acms.db"));
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The rows of `t` in a copy of the database file alone (no WAL beside it): what a checkpoint has copied. */
  function rowsInFileAlone(): number {
    const copy = join(dir, "copy.db");
    copyFileSync(join(dir, "acms.db"), copy);
    const alone = new Database(copy);
    try {
      const table = alone.prepare("SELECT 1 FROM sqlite_master WHERE name = 't'").get();
      return table ? (alone.prepare("SELECT count(*) FROM t").pluck().get() as number) : 0;
    } finally {
      alone.close();
      rmSync(copy, { force: true });
    }
  }

  it("copies committed writes into the database file from its thread, the serving connection never checkpointing", async () => {
    // A thread that has not looked yet: whatever the file holds, the serving connection put there.
    const idle = WalCheckpointer.start(db, 3_600_000)!;
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    const insert = db.prepare("INSERT INTO t (body) VALUES (?)");
    // Far past SQLite's 1,000-page automatic checkpoint, committed as uploads commit (synchronous = NORMAL).
    for (let i = 0; i < 3000; i++) withoutFsync(db, () => insert.run("x".repeat(2000)));
    expect(statSync(join(dir, "acms.db-wal")).size).toBeGreaterThan(4000 * 1024);
    expect(rowsInFileAlone()).toBe(0);
    await idle.stop();
    expect(idle.checkpoints).toBe(0);
    // A thread that looks every 20 ms copies it all (stopped before the file is read, so no copy is half done).
    const cp = WalCheckpointer.start(db, 20)!;
    await cp.nextCheckpoint();
    await cp.stop();
    expect(cp.checkpoints).toBeGreaterThan(0);
    expect(rowsInFileAlone()).toBe(3000);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });

  it("gives the serving connection its checkpoint back when the thread dies", async () => {
    const cp = WalCheckpointer.start(db, 20)!;
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    await (cp as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await cp.nextCheckpoint();
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });

  it("runs for the embedded engine's database, and its close leaves no WAL behind", async () => {
    rmSync(join(dir, "acms.db"), { force: true });
    db.close();
    const catalog = openSqliteCatalog({ path: join(dir, "cat.db"), coldDir: join(dir, "cold") });
    expect(catalog.db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    catalog.db.exec("CREATE TABLE u (x)");
    catalog.db.prepare("INSERT INTO u VALUES (1)").run();
    await catalog.close();
    expect(() => statSync(join(dir, "cat.db-wal"))).toThrow();
    const reopened = new Database(join(dir, "cat.db"), { readonly: true });
    expect(reopened.prepare("SELECT count(*) FROM u").pluck().get()).toBe(1);
    reopened.close();
  });

  it("does nothing for an in-memory database", () => {
    const mem = openSqliteDatabase(":memory:");
    expect(WalCheckpointer.start(mem)).toBeUndefined();
    mem.close();
  });
});
