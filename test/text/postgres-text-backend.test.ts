import { PostgresDocumentStore } from "../../src/adapters/postgres/postgres-document-store.js";
import { PostgresTextBackend } from "../../src/adapters/postgres/postgres-text-backend.js";
import { openTestPostgres } from "../support/engines/postgres-harness.js";
import { documentStoreLoader } from "./document-store-loader.js";
import { runTextBackendSuite, type TextBackendHarness } from "./text-backend-suite.js";

/** The PostgreSQL keyword backend with its loader: documents go in through PostgresDocumentStore, like the server's. */
async function createPostgresHarness(): Promise<TextBackendHarness> {
  const db = await openTestPostgres();
  return {
    backend: new PostgresTextBackend(db.pool),
    loader: documentStoreLoader(new PostgresDocumentStore(db.pool)),
    close: () => db.close(),
  };
}

// The golden file test/text/golden/postgres.json is a copy of fts5.json: PostgreSQL must rank exactly as FTS5.
runTextBackendSuite({ name: "postgres", create: createPostgresHarness });
