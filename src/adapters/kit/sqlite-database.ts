import Database from "better-sqlite3";

/** A better-sqlite3 handle, shared by the SQLite adapters of one data directory. */
export type SqliteDatabase = Database.Database;

/**
 * Opens (creating) a SQLite database in WAL mode with `synchronous = FULL`, so a committed transaction
 * survives a crash or power loss; `:memory:` gives a throwaway database for tests. Each adapter creates
 * its own tables (`CREATE TABLE IF NOT EXISTS`) when constructed. `secure_delete` is on: deleted content
 * is overwritten with zeros (in the page and in freed pages), so an erased resource's bytes are gone from
 * the file once the WAL is checkpointed (see `checkpointWal`), not left in free space.
 */
export function openSqliteDatabase(path: string): SqliteDatabase {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  db.pragma("secure_delete = ON");
  return db;
}

/**
 * Copies the WAL into the database and truncates it, so no old frame (a page as it was before a delete)
 * stays in the `-wal` file; a reader holding an old snapshot blocks that, so it is retried a few times.
 * Resolves true once the WAL is empty.
 */
export async function checkpointWal(db: SqliteDatabase, attempts = 50): Promise<boolean> {
  if (db.memory) return true;
  for (let i = 0; i < attempts; i++) {
    const row = db.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>;
    if (row[0]?.busy === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 20 * (i + 1)));
  }
  return false;
}

/**
 * A read-only connection of its own to the existing database at `path` (WAL: its read transaction sees one
 * committed state while the writer goes on), waiting on a busy database as the writer's connection does.
 */
export function openSqliteReader(path: string): SqliteDatabase {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  return db;
}

/** Whether `err` is SQLite refusing a duplicate key (a UNIQUE or PRIMARY KEY constraint). */
export function isSqliteUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
