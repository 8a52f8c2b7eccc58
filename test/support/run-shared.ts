import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Something made once per jest run and used by every test file that needs it, in every project: the
 * embedded and the duckdb project run the same client files, and what those build (a packed npm package,
 * a wheel in a venv) does not depend on the server's engine. Workers agree through the run directory the
 * global setup made, as the shared PostgreSQL does (engines/postgres.ts): an atomic mkdir elects the one
 * that builds, in `dir`, and writes its JSON result; the others wait for it (or for its failure, which
 * they report). Outside jest (no run directory) every call builds its own in a fresh temporary folder.
 * The global teardown removes the run directory, and `dir` with it. Callers must not change `dir`.
 */
export async function sharedPerRun<T>(name: string, build: (dir: string) => Promise<T>): Promise<T> {
  const runDir = process.env.ACMS_TEST_RUN_DIR;
  if (!runDir) return build(mkdtempSync(join(tmpdir(), `acms-${name}-`)));
  const dir = join(runDir, name);
  const result = join(runDir, `${name}.json`);
  const failure = join(runDir, `${name}.error`);
  let elected = false;
  try {
    mkdirSync(dir);
    elected = true;
  } catch {
    // another worker builds it
  }
  if (elected) {
    try {
      const value = await build(dir);
      writeFileSync(`${result}.tmp`, JSON.stringify(value));
      renameSync(`${result}.tmp`, result);
      return value;
    } catch (err) {
      writeFileSync(failure, String((err as Error).stack ?? err));
      throw err;
    }
  }
  for (;;) {
    if (existsSync(result)) return JSON.parse(readFileSync(result, "utf8")) as T;
    if (existsSync(failure)) throw new Error(`building ${name} failed in another test file: ${readFileSync(failure, "utf8")}`);
    await sleep(100);
  }
}
