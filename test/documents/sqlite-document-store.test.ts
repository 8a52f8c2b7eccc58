import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { resourceToken, SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend } from "../../src/adapters/sqlite/fts5-text-backend.js";
import { KeywordRows } from "../../src/adapters/sqlite/keyword-rows.js";
import { runDocumentStoreSuite, type DocumentStoreHarness } from "./document-store-suite.js";

/** The SQLite store on a database file, with FTS5 (its native keyword index) over the same connection. */
function sqliteHarness(): DocumentStoreHarness {
  const dir = mkdtempSync(join(tmpdir(), "acms-doc-store-"));
  const file = join(dir, "acms.db");
  let db: SqliteDatabase = openSqliteDatabase(file);
  let stray = 1_000_000_000;
  const h: DocumentStoreHarness = {
    store: new SqliteDocumentStore(db),
    text: new Fts5TextBackend(db),
    reopen: () => {
      db.close();
      db = openSqliteDatabase(file);
      h.text = new Fts5TextBackend(db);
      return new SqliteDocumentStore(db);
    },
    addStrayKeywordRow: (resourceId, text) => {
      stray += 1;
      // Through KeywordRows, as every keyword row is written (a stray row of an older database is in the
      // per-resource statistics too: the migration counted it).
      new KeywordRows(db).insert(stray, text, resourceToken(resourceId));
    },
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

runDocumentStoreSuite({ name: "SQLite with FTS5", nativeKeywordIndex: true, create: sqliteHarness });
