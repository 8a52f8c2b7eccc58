import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";

/** A PGlite database with the pgvector extension, served over the PostgreSQL wire protocol on 127.0.0.1. */
export interface PgliteVectorServer {
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/**
 * Starts an in-memory PGlite with pgvector (0.8.x: the `vector` extension Debian 12 does not package)
 * behind pglite-socket, in a child process (pglite-pgvector-server.mjs), so the ordinary `pg` client
 * reaches it by URL. PGlite is one session: give it a pool of one connection (concurrency and replica
 * tests need a real PostgreSQL).
 */
export async function startPgliteVector(): Promise<PgliteVectorServer> {
  const port = await freePort();
  // __dirname exists under jest (CommonJS); the benchmarks run as ES modules from the repository root.
  const here = typeof __dirname === "string" ? __dirname : join(process.cwd(), "test", "support", "engines");
  const child = spawn(process.execPath, [join(here, "pglite-pgvector-server.mjs"), String(port)], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      if (d.toString().includes("ready")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`PGlite server exited (${code}): ${stderr}`)));
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
