import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { CliIo } from "../../src/cli/cli-io.js";
import { runServe } from "../../src/cli/serve.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { DuckDbDatabase } from "../../src/adapters/duckdb/duckdb-database.js";

function captureIo(env: Record<string, string>): CliIo & { out: string; err: string } {
  const io = {
    out: "",
    err: "",
    env,
    stdout: { write: (s: string) => (io.out += s) },
    stderr: { write: (s: string) => (io.err += s) },
    setExitCode: () => undefined,
  };
  return io;
}

describe("ACMS_DUCKDB_PATH and serve --duckdb-path", () => {
  test("the path is read from the environment (resolved); it cannot be combined with ACMS_POSTGRES_URL", () => {
    expect(loadConfig({}).duckdbPath).toBeUndefined();
    expect(loadConfig({ ACMS_DUCKDB_PATH: " data/acms.duckdb " }).duckdbPath).toBe(resolve("data/acms.duckdb"));
    expect(() => loadConfig({ ACMS_DUCKDB_PATH: "a.duckdb", ACMS_POSTGRES_URL: "postgres://u:p@db/acms" })).toThrow(
      /ACMS_DUCKDB_PATH and ACMS_POSTGRES_URL/,
    );
  });

  test("--duckdb-path serves from that file; a file made for another embedding dimension is refused by name", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acms-duck-serve-"));
    try {
      const path = join(dataDir, "docs.duckdb");
      const running = await runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), port: "0", duckdbPath: path, handleSignals: false });
      await running.stop();
      expect(existsSync(path)).toBe(true);
      const db = await DuckDbDatabase.open({ path, dimension: 384 });
      expect((await db.query("SELECT count(*) FROM chunk_vectors"))[0][0]).toBe(0n);
      await db.close();
      await expect(
        runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), port: "0", duckdbPath: path, embeddingDim: "8", handleSignals: false }),
      ).rejects.toThrow(/FLOAT\[384\] embeddings, the server is configured for 8 dimensions/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
