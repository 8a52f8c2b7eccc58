import { closeSync, fsyncSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/** A held data-directory lock. */
export interface DataDirLock {
  /** Gives the directory up (idempotent). */
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function holderOf(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the data directory for this process: two servers on one directory would each keep their own
 * in-memory state (hot tier, vector partitions, the graph store) over the same files and drift apart.
 * The lock is a `LOCK` file holding the owner's pid; a lock left by a process that is gone is taken over.
 * Throws an Error with a one-line message when a live process holds it.
 */
export function lockDataDir(dir: string): DataDirLock {
  const path = join(dir, "LOCK");
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = holderOf(path);
      if (holder !== undefined && isAlive(holder)) {
        const who = holder === process.pid ? "this process (another server in it)" : `process ${holder}`;
        throw new Error(
          `data directory ${dir} is in use by ${who}: stop it or choose another ACMS_DATA_DIR (remove ${path} if no server runs)`,
        );
      }
      try {
        unlinkSync(path);
      } catch {
        // Another starter took it over first: try again.
      }
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    fsyncSync(fd);
    closeSync(fd);
    let held = true;
    return {
      release() {
        if (!held) return;
        held = false;
        if (holderOf(path) === process.pid) unlinkSync(path);
      },
    };
  }
  throw new Error(`cannot lock data directory ${dir}: ${path} keeps changing hands`);
}
