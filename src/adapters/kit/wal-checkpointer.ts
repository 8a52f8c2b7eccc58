import { Worker } from "node:worker_threads";
import { resolvePackage } from "./resolve-package.js";
import { workerSource } from "./worker-source.js";
import type { SqliteDatabase } from "./sqlite-database.js";

/** How often the checkpointer looks at the WAL (ms), and the least time between two of its checkpoints. */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1000;

/** What the checkpointer thread is started with. */
interface CheckpointerData {
  /** better-sqlite3's entry point, resolved here (the thread runs from source text, with no module of its own). */
  sqlitePath: string;
  dbPath: string;
  intervalMs: number;
}

/** What the thread tells: each checkpoint made (SQLite's frame counts), a failure, and that it stopped. */
type CheckpointerReply =
  | { type: "ready" }
  | { type: "checkpointed"; busy: number; log: number; checkpointed: number }
  | { type: "failed"; message: string }
  | { type: "stopped" };

/* eslint-disable @typescript-eslint/no-require-imports */
function runWalCheckpointer(req: NodeJS.Require): void {
  const { parentPort, workerData } = req("node:worker_threads") as typeof import("node:worker_threads");
  const fs = req("node:fs") as typeof import("node:fs");
  const data = workerData as CheckpointerData;
  const port = parentPort as import("node:worker_threads").MessagePort;
  const Database = req(data.sqlitePath) as typeof import("better-sqlite3");
  const db = new Database(data.dbPath, { fileMustExist: true });
  // The checkpoint syncs the WAL before it copies frames into the database and the database after: with FULL,
  // as on the serving connection, a checkpoint never leaves the file ahead of a durable WAL.
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 100");
  const wal = `${data.dbPath}-wal`;
  let seen = -1;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    timer = undefined;
    let modified = seen;
    try {
      modified = fs.statSync(wal).mtimeMs;
    } catch {
      // No WAL (yet): nothing to copy.
    }
    if (modified !== seen) {
      try {
        const [row] = db.pragma("wal_checkpoint(PASSIVE)") as Array<{ busy: number; log: number; checkpointed: number }>;
        // Written to since this look: the next one checkpoints again.
        seen = modified;
        port.postMessage({ type: "checkpointed", ...row } satisfies CheckpointerReply);
      } catch (err) {
        port.postMessage({ type: "failed", message: String(err) } satisfies CheckpointerReply);
      }
    }
    timer = setTimeout(tick, data.intervalMs);
  };
  port.on("message", (msg: unknown) => {
    if (msg !== "stop") return;
    if (timer) clearTimeout(timer);
    db.close();
    port.postMessage({ type: "stopped" } satisfies CheckpointerReply);
    port.close();
  });
  port.postMessage({ type: "ready" } satisfies CheckpointerReply);
  timer = setTimeout(tick, data.intervalMs);
}

/**
 * Checkpoints a SQLite database's WAL from a thread of its own, so the serving thread never does. SQLite's
 * automatic checkpoint runs inside the commit that crosses 1,000 WAL pages: it copies the WAL into the
 * database file and fsyncs both, on the thread that committed (measured on 2,000 small uploads: 41% of the
 * serving thread's write time). Here the serving connection's automatic checkpoint is off
 * (`wal_autocheckpoint = 0`) while this thread's own connection runs a PASSIVE checkpoint (it never blocks a
 * writer or a reader) once a second when the WAL changed: the WAL stays about a second of writes long, and
 * SQLite restarts it from its start once a checkpoint has copied all of it. Durability is SQLite's own:
 * the checkpoint syncs the WAL before copying and the database after. Should the thread fail to start or
 * die, the serving connection checkpoints for itself again (`wal_autocheckpoint` back to SQLite's 1,000).
 * Stopped (`stop`) before the database closes, so the serving connection is the last one and its close
 * checkpoints and removes the WAL as before.
 * @example const cp = WalCheckpointer.start(db); ...; await cp?.stop(); db.close();
 */
export class WalCheckpointer {
  private stopped = false;
  private count = 0;
  private readonly waiters: Array<() => void> = [];

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly worker: Worker,
  ) {}

  /**
   * Starts checkpointing `db` (a file database in WAL mode) from its own thread and turns the serving
   * connection's automatic checkpoint off; undefined (the connection keeps checkpointing itself) for an
   * in-memory database or another journal mode. A thread that fails to start gives the connection its
   * automatic checkpoint back.
   */
  static start(db: SqliteDatabase, intervalMs = DEFAULT_CHECKPOINT_INTERVAL_MS): WalCheckpointer | undefined {
    if (db.memory || db.pragma("journal_mode", { simple: true }) !== "wal") return undefined;
    const data: CheckpointerData = {
      sqlitePath: resolvePackage("better-sqlite3", "the WAL checkpointer"),
      dbPath: db.name,
      intervalMs,
    };
    const worker = new Worker(workerSource(runWalCheckpointer), { eval: true, workerData: data });
    worker.unref();
    const cp = new WalCheckpointer(db, worker);
    db.pragma("wal_autocheckpoint = 0");
    worker.on("message", (msg: CheckpointerReply) => {
      if (msg.type === "checkpointed") {
        cp.count += 1;
        for (const w of cp.waiters.splice(0)) w();
      } else if (msg.type === "failed") {
        cp.failures += 1;
      }
    });
    // A thread that dies (or never started) checkpoints nothing: the serving connection does it again.
    const fallBack = () => {
      if (!cp.stopped && db.open) db.pragma("wal_autocheckpoint = 1000");
      cp.stopped = true;
      for (const w of cp.waiters.splice(0)) w();
    };
    worker.on("error", fallBack);
    worker.on("exit", fallBack);
    return cp;
  }

  /** Checkpoints that failed (SQLite busy past its timeout, an I/O error): retried at the next look. */
  failures = 0;

  /** Checkpoints made so far (a figure for tests and operators). */
  get checkpoints(): number {
    return this.count;
  }

  /** Resolves at the next checkpoint (or once the thread has stopped). */
  nextCheckpoint(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops the thread and closes its connection; the serving connection checkpoints for itself again. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    // Unreferenced while it runs (it never keeps a process alive); referenced while stopping, or a process
    // with nothing else left would exit before the close that awaits it goes on.
    this.worker.ref();
    this.worker.postMessage("stop");
    await exited;
    if (this.db.open) this.db.pragma("wal_autocheckpoint = 1000");
    for (const w of this.waiters.splice(0)) w();
  }
}
