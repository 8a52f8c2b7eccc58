/**
 * A start that fails part-way leaves nothing behind: when a later step of `createBackends` throws (here the
 * configured SPARQL endpoint cannot be reached, the last step on every engine), what the earlier steps
 * opened is closed again — the tier service, the vector backend and its background load waiting for
 * `startLoads`, the databases — and the data directory is free for the next attempt.
 */
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { TierService } from "../../src/application/tiers/tier-service.js";
import { UnavailableError } from "../../src/domain/errors.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { testView } from "../text/text-corpus.js";

let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "acms-failed-start-"));
});
afterEach(() => {
  jest.restoreAllMocks();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A local port nothing listens on (refused at once: no network, no waiting on a timeout). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What `promise` settled with within `ms` (its error when it rejected), or "pending". */
async function outcomeWithin(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("pending"), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => "resolved",
        (err: unknown) => err,
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe("createBackends failing after its first steps", () => {
  it("embedded: closes the tiers and the vector backend, failing its held load, and frees the data directory", async () => {
    const load = jest.spyOn(PartitionedVectorBackend.prototype, "load");
    const tiersClosed = jest.spyOn(TierService.prototype, "close");
    const env = { ACMS_DATA_DIR: dataDir, ACMS_SPARQL_QUERY_URL: `http://127.0.0.1:${await closedPort()}/sparql` };
    await expect(createBackends(loadConfig(env), { deferLoads: true })).rejects.toThrow(/SPARQL endpoint .* is unreachable/);

    expect(tiersClosed).toHaveBeenCalledTimes(1);
    expect(load).toHaveBeenCalledTimes(1);
    // The load waited for startLoads, which nobody can call now: it fails instead of waiting forever.
    expect(await outcomeWithin(load.mock.results[0].value as Promise<void>, 2000)).toBeInstanceOf(UnavailableError);
    const vector = load.mock.contexts[0] as PartitionedVectorBackend;
    expect(vector.loading).toBe(false);
    const query = Float32Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0));
    const search = vector.search(testView(["01JD0C00000000000000000003"]), query, {
      topK: 1,
      minScore: 0,
      now: Date.now(),
      recentWindowMs: 60_000,
    });
    expect(await outcomeWithin(search, 2000)).toEqual(new UnavailableError("the vector backend is closed"));

    const again = await createBackends(loadConfig({ ACMS_DATA_DIR: dataDir }));
    await again.close();
  });

  it("DuckDB: closes the tiers and both databases, and frees the data directory and the DuckDB file", async () => {
    const tiersClosed = jest.spyOn(TierService.prototype, "close");
    const duckdbPath = join(dataDir, "docs.duckdb");
    const env = {
      ACMS_DATA_DIR: dataDir,
      ACMS_DUCKDB_PATH: duckdbPath,
      ACMS_SPARQL_QUERY_URL: `http://127.0.0.1:${await closedPort()}/sparql`,
    };
    await expect(createBackends(loadConfig(env), { deferLoads: true })).rejects.toThrow(/SPARQL endpoint .* is unreachable/);

    expect(tiersClosed).toHaveBeenCalledTimes(1);
    const again = await createBackends(loadConfig({ ACMS_DATA_DIR: dataDir, ACMS_DUCKDB_PATH: duckdbPath }));
    await again.close();
  });
});
