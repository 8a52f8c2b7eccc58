import Database from "better-sqlite3";

/** A better-sqlite3 handle, shared by the SQLite adapters of one data directory. */
export type SqliteDatabase = Database.Database;

/**
 * Opens (creating) a SQLite database in WAL mode with `synchronous = FULL`, so a committed transaction
 * survives a crash or power loss, and `secure_delete`, so deleted content does not linger in free space; `:memory:` gives a throwaway database for tests. Each adapter creates
 * its own tables (`CREATE TABLE IF NOT EXISTS`) when constructed.
 */
export function openSqliteDatabase(path: string): SqliteDatabase {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  // Deleted content is overwritten in place, so a deletion (DeleteFragment, an erasure) leaves no copy in
  // free space: once the WAL is checkpointed, no byte of it is left in the database file.
  db.pragma("secure_delete = ON");
  return db;
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
