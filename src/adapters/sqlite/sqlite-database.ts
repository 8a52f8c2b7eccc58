import Database from "better-sqlite3";

/** A better-sqlite3 handle, shared by the SQLite adapters of one data directory. */
export type SqliteDatabase = Database.Database;

/**
 * Opens (creating) a SQLite database in WAL mode with `synchronous = FULL`, so a committed transaction
 * survives a crash or power loss; `:memory:` gives a throwaway database for tests. Each adapter creates
 * its own tables (`CREATE TABLE IF NOT EXISTS`) when constructed.
 */
export function openSqliteDatabase(path: string): SqliteDatabase {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  return db;
}
