import { PostgresDocumentStore } from "../../src/adapters/postgres/postgres-document-store.js";
import { PostgresUnitReader } from "../../src/adapters/postgres/postgres-unit-reader.js";
import { openTestPostgres } from "../support/engines/postgres-harness.js";
import { runUnitReaderSuite } from "./unit-reader-suite.js";

runUnitReaderSuite({
  name: "PostgreSQL",
  create: async () => {
    const db = await openTestPostgres();
    return { store: new PostgresDocumentStore(db.pool), reader: new PostgresUnitReader(db.pool), close: () => db.close() };
  },
});
