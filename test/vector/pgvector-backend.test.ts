import { ensureVectorTable, hasPgvector, PgvectorBackend } from "../../src/adapters/postgres/pgvector-backend.js";
import { migrate } from "../../src/adapters/postgres/postgres-migrations.js";
import { openPostgresPool, type PostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import type { VectorBackend } from "../../src/ports/vector-backend.js";
import { startPgliteVector, type PgliteVectorServer } from "../support/engines/pglite-pgvector.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { runVectorBackendSuite } from "./vector-backend-suite.js";

// PGlite runs PostgreSQL in WebAssembly: the brute-force recall tests scan thousands of vectors per query there.
jest.setTimeout(300_000);

// One PGlite (one session) per backend: dropping the table between tests keeps them apart.
let server: PgliteVectorServer;
let pool: PostgresPool;
beforeAll(async () => {
  server = await startPgliteVector();
  pool = openPostgresPool(server.url, { max: 1 });
  await migrate(pool);
});
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

async function fresh(dimension: number, exactThreshold?: number): Promise<VectorBackend> {
  await pool.query("DROP TABLE IF EXISTS chunk_vectors");
  await ensureVectorTable(pool, dimension);
  return new PgvectorBackend(pool, dimension, { exactThreshold });
}

const settle = (b: VectorBackend) => (b as PgvectorBackend).flushed();

runVectorBackendSuite({ name: "pgvector (PGlite), exact scan", exact: true, create: (d) => fresh(d), settle });
runVectorBackendSuite({
  name: "pgvector (PGlite), HNSW with iterative scan forced",
  exact: false,
  create: (d) => fresh(d, 0),
  settle,
  skip: {
    "breaks score ties by chunk key": "an approximate index need not return every member of a tie; ties among the rows it returns are ordered by chunk key",
    "ties across partitions are broken by chunk key too": "as above",
  },
});

describe("pgvector detection", () => {
  test("PGlite offers the vector extension; Debian's PostgreSQL 15 does not (the server then holds vectors in process)", async () => {
    expect(await hasPgvector(pool)).toBe(true);
    const plain = openPostgresPool(await freshPostgresDatabase());
    try {
      expect(await hasPgvector(plain)).toBe(false);
    } finally {
      await plain.end();
    }
  });

  test("a table of another dimension is refused", async () => {
    await fresh(8);
    await expect(ensureVectorTable(pool, 16)).rejects.toThrow(/8-dimensional vectors, the server is configured for 16/);
  });
});
