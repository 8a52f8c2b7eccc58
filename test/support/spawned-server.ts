import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKey, hashKey } from "../../src/application/access/key-ring.js";
import { DEFAULT_PRINCIPALS } from "./test-server.js";

const ROOT = join(__dirname, "..", "..");

/** `acms serve` as a real process (the compiled bin/acms.js), on a free port, with the default test principals. */
export interface SpawnedServer {
  url: string;
  /** Clear-text API keys by principal name (admin, writer, reader, other). */
  keys: Record<string, string>;
  /** Stops it with SIGTERM (a graceful stop: in-flight calls finish, spans are exported) and removes its data. */
  close(): Promise<void>;
}

/**
 * Starts `node bin/acms.js serve --port 0` with `env` (its whole environment besides PATH and HOME), as an
 * operator runs it: for what only the real process shows (the OTLP exporter loads Node's http module with a
 * dynamic import, which jest's CommonJS sandbox cannot run in process).
 */
export async function spawnServer(env: Record<string, string>): Promise<SpawnedServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "acms-spawned-"));
  const keys: Record<string, string> = {};
  const entries = DEFAULT_PRINCIPALS.map((p) => {
    keys[p.name] = generateKey();
    return { name: p.name, key_sha256: hashKey(keys[p.name]), projects: p.projects, write: p.write };
  });
  const child = spawn(process.execPath, [join(ROOT, "bin", "acms.js"), "serve", "--port", "0"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ACMS_DATA_DIR: dataDir, ACMS_KEYS: JSON.stringify(entries), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout);
      if (m) resolve(m[1]);
    });
    void exited.then((code) => reject(new Error(`acms serve exited with ${code}: ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    keys,
    async close() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `acms serve` as a bare process (the compiled bin/acms.js) on a free port with exactly `env` besides PATH and HOME:
 * for tests that kill it (-9) and start another over the same data. Its stdout is kept; stderr is dropped.
 */
export function spawnServe(env: Record<string, string>): { child: ChildProcess; stdout: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [join(ROOT, "bin", "acms.js"), "serve", "--port", "0"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", () => undefined);
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, stdout: () => out, exit };
}

/** The URL a `spawnServe` process listens on, once it says so (rejects when it exits first). */
export async function listening(p: ReturnType<typeof spawnServe>): Promise<string> {
  let exited = false;
  void p.exit.then(() => (exited = true));
  for (;;) {
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(p.stdout());
    if (m) return m[1];
    if (exited) throw new Error(`the server exited:\n${p.stdout()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
