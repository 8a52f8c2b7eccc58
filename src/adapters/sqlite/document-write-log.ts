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
  /** Each resource's marks (see `writeMarksOf`). */
  readonly marks: Map<string, WriteMarks>;
  /** Grows when `marks` starts over (past RESOURCES_TRACKED): anything read before is stale then. */
  resets: number;
}

/** One resource's marks: its last (`seq` then) and the operations under way. */
export interface WriteMarks {
  last: number;
  busy: number;
}

/** Resources whose marks are kept; past this `marks` starts over (readers then drop what they hold). */
const RESOURCES_TRACKED = 1 << 17;

const logByDb = new WeakMap<SqliteDatabase, DocumentWriteLog>();

/** `db`'s DocumentWriteLog, live (readers read it, only the document store marks it). */
export function documentWriteLog(db: SqliteDatabase): DocumentWriteLog {
  let log = logByDb.get(db);
  if (!log) logByDb.set(db, (log = { seq: 0, marks: new Map(), resets: 0 }));
  return log;
}

/**
 * `resourceId`'s marks, made (none yet) on first use: a reader keeps the object with what it read, so that
 * telling whether it is still current costs a field read, not a look-up.
 */
export function writeMarksOf(log: DocumentWriteLog, resourceId: string): WriteMarks {
  let marks = log.marks.get(resourceId);
  if (marks === undefined) {
    if (log.marks.size >= RESOURCES_TRACKED) {
      // Readers drop everything they hold (`resets`); the marks of operations under way stay.
      for (const [id, m] of log.marks) if (m.busy === 0) log.marks.delete(id);
      log.resets += 1;
    }
    log.marks.set(resourceId, (marks = { last: 0, busy: 0 }));
  }
  return marks;
}

/** Marks the start of an operation writing `resourceId`'s documents. */
export function beginDocumentWrite(log: DocumentWriteLog, resourceId: string): void {
  const marks = writeMarksOf(log, resourceId);
  marks.busy += 1;
  marks.last = ++log.seq;
}

/** Marks the end (settled either way) of an operation `beginDocumentWrite` marked. */
export function endDocumentWrite(log: DocumentWriteLog, resourceId: string): void {
  const marks = writeMarksOf(log, resourceId);
  marks.busy = Math.max(0, marks.busy - 1);
  marks.last = ++log.seq;
}
