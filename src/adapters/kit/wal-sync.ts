import { open, type FileHandle } from "node:fs/promises";

function ignore(): void {}

/**
 * Group commit for a SQLite database in WAL mode whose writes commit with `synchronous = NORMAL` (written to
 * the WAL file, not yet fsynced): `sync()` makes every commit marked before it durable with one fsync of the
 * WAL file (fdatasync, as SQLite syncs it), run on libuv's thread pool. Callers that arrive while an fsync runs share the one that follows
 * it, so concurrent writers pay one or two fsyncs between them, and the serving thread never waits on the disk.
 *
 * An fsync of any descriptor of a file flushes every page written to it, so a handle of our own on the WAL
 * covers what SQLite's connection wrote. One handle serves while the database is open: SQLite restarts the
 * WAL in place after a checkpoint (which syncs the WAL before moving its frames into the database file) and
 * deletes it only when its last connection closes, after the store using this has closed. (Checking the
 * path's inode before each fsync cost two more thread-pool round trips, ~0.2 ms, per sync.)
 *
 * One writer alone waits ~0.3 ms for a write and its sync here, against ~0.18 ms for a commit with
 * `synchronous = FULL` (the thread-pool hop), but its serving thread is free meanwhile; 16 concurrent
 * writers took ~0.05 ms a write (16 writes an fsync) against that 0.18 ms each.
 * @example const wal = new WalSync(`${db.name}-wal`); commitRelaxed(); wal.wrote(); await wal.sync();
 */
export class WalSync {
  /** Commits marked by `wrote`, and how many of them the last finished fsync covered. */
  private written = 0;
  private synced = 0;
  /** The fsync in progress and how many commits it covers. */
  private running: Promise<void> | undefined;
  private runningUpTo = 0;
  /** The fsync queued behind the running one, shared by every caller that came while it ran. */
  private next: Promise<void> | undefined;
  private handle: FileHandle | undefined;
  /** Work that may run only once the commits made before it was queued are durable. */
  private after: Array<() => Promise<void>> = [];
  private fsyncs = 0;

  constructor(private readonly path: string) {}

  /** How many fsyncs were made (each covering every commit marked before it started): a figure for operators and tests. */
  get syncs(): number {
    return this.fsyncs;
  }

  /** Marks one commit made without an fsync. */
  wrote(): void {
    this.written += 1;
  }

  /**
   * Queues `task` to run after the next fsync, which covers every commit marked before this call (a cold
   * file is unlinked only once the row that stopped naming it is durable). A failing task is ignored: it
   * only ever leaves a file that nothing references, which the store's `load` deletes.
   */
  afterSync(task: () => Promise<void>): void {
    this.after.push(task);
  }

  /** Undefined when every marked commit is durable and nothing waits; else resolves once they are. */
  sync(): Promise<void> | undefined {
    if (this.synced >= this.written && this.after.length === 0) return undefined;
    if (this.next) return this.next;
    if (!this.running) return this.start();
    if (this.runningUpTo >= this.written && this.after.length === 0) return this.running;
    const running = this.running;
    this.next = running.then(ignore, ignore).then(() => {
      this.next = undefined;
      return this.start();
    });
    return this.next;
  }

  /** Syncs what is left and closes the handle. */
  async close(): Promise<void> {
    await this.sync();
    await this.handle?.close();
    this.handle = undefined;
  }

  private start(): Promise<void> {
    const upTo = this.written;
    const tasks = this.after;
    this.after = [];
    this.runningUpTo = upTo;
    const run = (async () => {
      if (upTo > this.synced) {
        try {
          await this.fsync();
        } catch (err) {
          // Nothing became durable: the tasks wait for a later fsync.
          this.after = [...tasks, ...this.after];
          throw err;
        }
        this.synced = Math.max(this.synced, upTo);
      }
      for (const task of tasks) await task().catch(ignore);
    })();
    this.running = run;
    const settled = () => {
      if (this.running === run) this.running = undefined;
    };
    run.then(settled, settled);
    return run;
  }

  private async fsync(): Promise<void> {
    this.handle ??= await open(this.path, "r");
    await this.handle.datasync();
    this.fsyncs += 1;
  }
}
