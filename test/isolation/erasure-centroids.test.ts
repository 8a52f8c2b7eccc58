import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import type { VectorEntry } from "../../src/ports/vector-backend.js";
import { ensureProject } from "../support/ensure-project.js";
import { prng } from "../support/prng.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { clusteredVectors } from "../vector/vector-fixtures.js";

// The store-wide vector cells' centroids (`vectors/cells.f32` on the embedded default) are averages of the
// vectors they were trained on: after a DeleteResource that erased vectors, the saved file must hold no
// average of them. On the embedded default the file goes with the erasure and is trained again on the rows
// held, byte for byte what a training on those rows alone gives. The other engines keep no vector files.

jest.setTimeout(240_000);

const DIM = 4;
/** Rows the erased resource holds, and the rows that stay: past the 4,096 rows from which the server keeps cells. */
const DOOMED_ROWS = 1200;
const KEEPER_ROWS = 4200;
const PER_MESSAGE = 600;

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: String(DIM) } });
});

afterAll(async () => {
  await t?.close(true);
});

const embedded = () => t.config.postgresUrl === undefined && t.config.duckdbPath === undefined;

/** Vectors around clusters of their own per seed. */
const vectors = (seed: number, count: number) => clusteredVectors(prng(seed), DIM, count, 8, 0.3);

async function* messages(resourceId: string, rows: Float32Array[], label: string) {
  for (let from = 0; from < rows.length; from += PER_MESSAGE)
    yield {
      resourceId,
      documents: rows.slice(from, from + PER_MESSAGE).map((v, i) => ({
        path: `${label}/${from + i}.md`,
        content: `${label} row ${from + i}`,
        metadata: {},
        chunks: [{ text: `${label} row ${from + i}`, embedding: Array.from(v) }],
      })),
    };
}

/** Resolves once `check` holds, looking again every 50 ms (the jest timeout bounds it). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 50));
}

/** The header of a saved centroids file: [format, dimension, cells, trained rows]. */
const header = (bytes: Buffer) => Array.from(new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 32)));

it("DeleteResource drops the cells' saved centroids, which are trained again on the remaining vectors only", async () => {
  await ensureProject(t, "writer", "local/cells");
  const reg = t.client(RegistryService, "writer");
  const register = async (alias: string) => (await reg.registerResource({ project: "local/cells", alias, kind: "repo" })).resource!.id;
  const keeper = await register("keeper");
  const doomed = await register("doomed");
  // PostgreSQL and DuckDB hold their vectors in their own tables and save no vector index (a few rows show it).
  const scale = embedded() ? 1 : 100;
  const keeperRows = vectors(11, KEEPER_ROWS / scale);
  const idx = t.client(IndexService, "writer");
  // The doomed rows first: the cells train once the store holds 4,096 rows, which it reaches only with all of
  // them (the keeper's 4,200 alone would reach it, and cells trained then, on the keeper's rows alone, would
  // equal the ones trained again after the erasure; CI met that race once).
  await idx.upsertDocuments(messages(doomed, vectors(12, DOOMED_ROWS / scale), "doomed"));
  await idx.upsertDocuments(messages(keeper, keeperRows, "keeper"));
  const file = join(t.dataDir, "vectors", "cells.f32");

  if (!embedded()) {
    const { report } = await reg.deleteResource({ resourceId: doomed });
    expect(Number(report!.vectors)).toBe(DOOMED_ROWS / scale);
    expect(existsSync(join(t.dataDir, "vectors"))).toBe(false);
    return;
  }

  // Trained once the store held 4,096 rows, saved when the cells were complete (the probe can fail).
  await until(() => existsSync(file));
  const before = readFileSync(file);
  const { report } = await reg.deleteResource({ resourceId: doomed });
  expect(Number(report!.vectors)).toBe(DOOMED_ROWS);
  // When the call answers, the file trained with the erased vectors is gone; the retrained one comes later.
  expect(existsSync(file) ? readFileSync(file).equals(before) : false).toBe(false);
  await until(() => existsSync(file));
  const after = readFileSync(file);
  expect(after.equals(before)).toBe(false);
  expect(header(after)).toEqual([1, DIM, expect.any(Number), KEEPER_ROWS]);

  // Byte for byte what cells trained on the keeper's vectors alone save (the training is deterministic).
  const dir = mkdtempSync(join(tmpdir(), "acms-cells-reference-"));
  const reference = new PartitionedVectorBackend({ dimension: DIM, graphDir: dir });
  try {
    // The keeper's chunk keys on the server: after the doomed rows' (one chunk a document).
    const entries: VectorEntry[] = keeperRows.map((vector, i) => ({
      chunkKey: DOOMED_ROWS + i + 1,
      resourceId: keeper,
      path: `keeper/${i}.md`,
      supersededAt: null,
      vector,
    }));
    reference.replaceAll(entries);
    await reference.whenIndexed();
    expect(after.equals(readFileSync(join(dir, "cells.f32")))).toBe(true);
  } finally {
    await reference.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
