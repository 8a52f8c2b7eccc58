import type { SqliteDatabase } from "./sqlite-database.js";

interface SyncPragmas {
  relaxed: { run(): unknown };
  strict: { run(): unknown };
}

const pragmas = new WeakMap<SqliteDatabase, SyncPragmas>();

/**
 * Runs `write` (one commit or several) with `synchronous = NORMAL`, then restores the connection's
 * `synchronous = FULL` (openSqliteDatabase): in WAL mode such a commit survives a crash of the process at once
 * and is durable once a later fsync of the WAL covers it (a commit with FULL, or WalSync). The WAL is replayed
 * in commit order, so after a power loss the database is at some commit: never a later one without an
 * earlier. For writes nothing acknowledges on their own (an upload's staging and settling slices, keyword
 * rows rewritten as they were, LRU order): each commit with FULL was an fsync on the serving thread.
 * @example withoutFsync(db, () => stageSlice.immediate(from, to)); // durable with the publish commit after it
 */
export function withoutFsync<T>(db: SqliteDatabase, write: () => T): T {
  let p = pragmas.get(db);
  if (!p) pragmas.set(db, (p = { relaxed: db.prepare("PRAGMA synchronous = NORMAL"), strict: db.prepare("PRAGMA synchronous = FULL") }));
  p.relaxed.run();
  try {
    return write();
  } finally {
    p.strict.run();
  }
}
