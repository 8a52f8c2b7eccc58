import type { SqliteDatabase } from "../kit/sqlite-database.js";

/**
 * Resources whose documents one connection's document store is writing, or has written, by this process:
 * every write of a resource's documents, chunks or keyword rows (an upload, a deletion, a rebuild, an
 * erasure: each runs in SqliteDocumentStore's write order for the resource) is one operation, marked when it
 * starts and when it settles. What a reader read of a resource is still what the tables hold while no
 * operation of it started since (`writtenSince`) and none was under way when it read (`isBeingWritten`):
 * between those marks its transactions commit one by one, with other work between them. Another
 * connection's commits are for `PRAGMA data_version` to tell.
 */
export interface DocumentWriteLog {
  /** Grows by one at every mark. */
  seq: number;
  /** Each resource's last mark. */
  readonly last: Map<string, number>;
  /** Operations under way, by resource. */
  readonly busy: Map<string, number>;
  /** Grows when `last` starts over (past RESOURCES_TRACKED): anything read before is stale then. */
  resets: number;
}

/** Resources whose last mark is kept; past this `last` starts over (readers then drop what they hold). */
const RESOURCES_TRACKED = 1 << 17;

const logByDb = new WeakMap<SqliteDatabase, DocumentWriteLog>();

/** `db`'s DocumentWriteLog, live (readers read it, only the document store marks it). */
export function documentWriteLog(db: SqliteDatabase): DocumentWriteLog {
  let log = logByDb.get(db);
  if (!log) logByDb.set(db, (log = { seq: 0, last: new Map(), busy: new Map(), resets: 0 }));
  return log;
}

/** Marks the start of an operation writing `resourceId`'s documents. */
export function beginDocumentWrite(log: DocumentWriteLog, resourceId: string): void {
  log.busy.set(resourceId, (log.busy.get(resourceId) ?? 0) + 1);
  mark(log, resourceId);
}

/** Marks the end (settled either way) of an operation `beginDocumentWrite` marked. */
export function endDocumentWrite(log: DocumentWriteLog, resourceId: string): void {
  const n = (log.busy.get(resourceId) ?? 1) - 1;
  if (n > 0) log.busy.set(resourceId, n);
  else log.busy.delete(resourceId);
  mark(log, resourceId);
}

/** Whether an operation writing `resourceId`'s documents is under way (what a reader reads now may change before it ends). */
export function isBeingWritten(log: DocumentWriteLog, resourceId: string): boolean {
  return log.busy.has(resourceId);
}

/** Whether an operation of `resourceId` started or ended after `seq` (a reader's `log.seq` when it read). */
export function writtenSince(log: DocumentWriteLog, resourceId: string, seq: number): boolean {
  return (log.last.get(resourceId) ?? 0) > seq;
}

function mark(log: DocumentWriteLog, resourceId: string): void {
  if (log.last.size >= RESOURCES_TRACKED && !log.last.has(resourceId)) {
    log.last.clear();
    log.resets += 1;
  }
  log.last.set(resourceId, ++log.seq);
}
