import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where Debian's postgresql-15 puts its server binaries. */
export const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";

/** A running throwaway PostgreSQL cluster: its base URL (database `postgres`), and how to stop it. */
export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  port: number;
  dir: string;
  pid?: number;
}

/** Installs postgresql-15 with apt-get when its binaries are absent (CI on a fresh machine). */
export function ensurePostgresInstalled(): void {
  if (existsSync(join(POSTGRES_BIN, "initdb"))) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-q"], { stdio: "ignore", env });
  execFileSync("apt-get", ["install", "-y", "-q", "postgresql-15"], { stdio: "ignore", env });
  if (!existsSync(join(POSTGRES_BIN, "initdb"))) throw new Error("postgresql-15 is not installed and apt-get could not install it");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/** Runs a cluster binary as the postgres user when we are root (PostgreSQL refuses to run as root). */
function asPostgres(bin: string, args: string[]): void {
  const cmd = join(POSTGRES_BIN, bin);
  const run =
    process.getuid?.() === 0
      ? spawnSync("su", ["postgres", "-s", "/bin/sh", "-c", [cmd, ...args].map(shellQuote).join(" ")], { encoding: "utf8" })
      : spawnSync(cmd, args, { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`${bin} failed: ${run.stderr || run.stdout}`);
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

/**
 * Starts a fresh PostgreSQL 15 cluster in a temp dir (trust auth, 127.0.0.1 on a random free port, the
 * socket in its own dir), installing the server first when absent. Settings favour a test machine:
 * fsync stays on (the crash tests rely on it), but a small shared_buffers.
 */
export async function startPostgresCluster(): Promise<PostgresCluster> {
  ensurePostgresInstalled();
  const dir = mkdtempSync(join(tmpdir(), "acms-pg-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres", dir]);
  asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"]);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      asPostgres("pg_ctl", [
        "-D",
        data,
        "-l",
        join(dir, "log"),
        "-w",
        "-t",
        "60",
        "-o",
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=32MB`,
        "start",
      ]);
      return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, dir };
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

/**
 * The command that stops `cluster` and removes its files, as an argv (for the jest global teardown, which
 * runs every `<engine>.stop.json` it finds in the run directory).
 */
export function stopCommand(cluster: Pick<PostgresCluster, "dir">): string[] {
  const pgCtl = [join(POSTGRES_BIN, "pg_ctl"), "-D", join(cluster.dir, "data"), "-m", "immediate", "-w", "stop"].map(shellQuote).join(" ");
  const stop = process.getuid?.() === 0 ? `su postgres -s /bin/sh -c ${shellQuote(pgCtl)}` : pgCtl;
  return ["/bin/sh", "-c", `${stop}; rm -rf ${shellQuote(cluster.dir)}`];
}

/** Stops a cluster started by startPostgresCluster and removes its files. */
export function stopPostgresCluster(cluster: Pick<PostgresCluster, "dir">): void {
  try {
    asPostgres("pg_ctl", ["-D", join(cluster.dir, "data"), "-m", "immediate", "-w", "stop"]);
  } finally {
    rmSync(cluster.dir, { recursive: true, force: true });
  }
}
