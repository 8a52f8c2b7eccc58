import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { CliIo } from "../../src/cli/cli-io.js";
import { runServe } from "../../src/cli/serve.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";

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

describe("ACMS_POSTGRES_URL and serve --postgres-url", () => {
  test("the URL is read from the environment; anything but a postgres:// URL is refused by name", () => {
    expect(loadConfig({}).postgresUrl).toBeUndefined();
    expect(loadConfig({ ACMS_POSTGRES_URL: " postgresql://u:p@db:5432/acms " }).postgresUrl).toBe("postgresql://u:p@db:5432/acms");
    expect(() => loadConfig({ ACMS_POSTGRES_URL: "mysql://db/acms" })).toThrow(/^ACMS_POSTGRES_URL must be a postgres:\/\//);
  });

  test("a bad --postgres-url names the flag; a good one serves from that database (its tables hold the project)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acms-pg-serve-"));
    try {
      await expect(
        runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), port: "0", postgresUrl: "not a url", handleSignals: false }),
      ).rejects.toThrow(/--postgres-url \(ACMS_POSTGRES_URL\)/);
      const url = await freshPostgresDatabase();
      const running = await runServe({ io: captureIo({ ACMS_DATA_DIR: dataDir }), port: "0", postgresUrl: url, handleSignals: false });
      try {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          const { rows } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM acms_schema_migrations");
          expect(rows[0].n).toBeGreaterThan(0);
        } finally {
          await c.end();
        }
      } finally {
        await running.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
