import { openSqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { SqliteUnitReader } from "../../src/adapters/sqlite/sqlite-unit-reader.js";
import { runUnitReaderSuite } from "./unit-reader-suite.js";

runUnitReaderSuite({
  name: "SQLite",
  create: () => {
    const db = openSqliteDatabase(":memory:");
    return {
      store: new SqliteDocumentStore(db),
      reader: new SqliteUnitReader(db),
      close: () => {
        db.close();
      },
    };
  },
});
