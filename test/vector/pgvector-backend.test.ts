import { ensureVectorTable, hasPgvector, PgvectorBackend } from "../../src/adapters/postgres/pgvector-backend.js";
import { migrate } from "../../src/adapters/postgres/postgres-migrations.js";
import { openPostgresPool, type PostgresPool } from "../../src/adapters/postgres/postgres-pool.js";
import type { VectorBackend, VectorEntry } from "../../src/ports/vector-backend.js";
import { prng } from "../support/prng.js";
import { clusteredVectors, referenceSearch, searchOpts, viewOf } from "./vector-fixtures.js";
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

/** The scope-shape test's 20,000 rows of 128 dimensions, scanned per query in WebAssembly: past the test's 15 minutes here. */
const SHAPES = "recall@10 >= 0.99 at every scope shape over many small partitions, and exhaustive only when exact";

runVectorBackendSuite({
  name: "pgvector (PGlite), exact scan",
  exact: true,
  create: (d) => fresh(d),
  settle,
  skip: {
    [SHAPES]:
      "an exact scan in SQL is exact at every shape by construction; PGlite scans 20,000 rows per query in WebAssembly, past the test's time (recall at scope sizes: 'pgvector recall at every scope size' below)",
  },
});
runVectorBackendSuite({
  name: "pgvector (PGlite), HNSW with iterative scan forced",
  exact: false,
  create: (d) => fresh(d, 0),
  settle,
  skip: {
    "breaks score ties by chunk key":
      "an approximate index need not return every member of a tie; ties among the rows it returns are ordered by chunk key",
    "ties across partitions are broken by chunk key too": "as above",
  },
});

describe("pgvector recall at every scope size", () => {
  test("recall@10 >= 0.99 of brute force for scopes of 1 to 40 resources, exact below the threshold and HNSW above it", async () => {
    const dim = 32;
    // A low threshold so both paths run on a data set PGlite (WebAssembly) handles in a test.
    const backend = (await fresh(dim, 400)) as PgvectorBackend;
    const rnd = prng(5);
    const ids = Array.from({ length: 40 }, (_, i) => `01JRECA11${String(i).padStart(17, "0")}`);
    const vectors = clusteredVectors(rnd, dim, 4000, 30, 0.8);
    // Zipf-like resource sizes: resource i holds about 1/(i+1) of the rows.
    const entries: VectorEntry[] = vectors.map((v, i) => ({
      chunkKey: i + 1,
      resourceId: ids[Math.min(ids.length - 1, Math.floor(ids.length * Math.pow(rnd(), 2)))],
      path: `doc/${i % 50}.md`,
      supersededAt: null,
      vector: v,
    }));
    for (let i = 0; i < entries.length; i += 1000) backend.upsert(entries.slice(i, i + 1000));
    await backend.flushed();
    for (const size of [1, 3, 10, 40]) {
      const view = viewOf(ids.slice(0, size));
      let found = 0;
      let wanted = 0;
      for (let q = 0; q < 15; q++) {
        const query = Float32Array.from(vectors[Math.floor(rnd() * vectors.length)], (x) => x + 0.3 * (rnd() - 0.5));
        const want = new Set(referenceSearch(entries, view, query, searchOpts()).map((h) => h.chunkKey));
        const got = await backend.search(view, query, searchOpts());
        found += got.hits.filter((h) => want.has(h.chunkKey)).length;
        wanted += want.size;
      }
      expect({ size, recall: found / wanted >= 0.99 ? "≥ 0.99" : found / wanted }).toEqual({ size, recall: "≥ 0.99" });
    }
  });
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
