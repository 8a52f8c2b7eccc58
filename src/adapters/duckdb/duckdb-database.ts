import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from "@duckdb/node-api";

/** Reader connections per instance: concurrent searches and fetches run on them, one query each at a time. */
const READERS = 2;

/** Options of one DuckDB database. */
export interface DuckDbDatabaseOptions {
  /** The database file (created when absent), or ":memory:". */
  path: string;
  /** The embedding dimension of `chunk_vectors` (a file made for another dimension is refused). */
  dimension: number;
  /** DuckDB worker threads per query (default 2: the service shares its machine with the event loop). */
  threads?: number;
}

/** Runs SQL on one connection inside a transaction the caller does not manage. */
export interface DuckDbTx {
  /** Every row of the statement, as arrays (BIGINT comes back as bigint: convert with `Number`). */
  all(sql: string, params?: DuckDBValue[]): Promise<DuckDBValue[][]>;
  run(sql: string, params?: DuckDBValue[]): Promise<void>;
  /** The connection itself, for the appender. */
  readonly connection: DuckDBConnection;
}

function txOf(connection: DuckDBConnection): DuckDbTx {
  return {
    connection,
    async all(sql, params) {
      const reader = await connection.runAndReadAll(sql, params);
      return reader.getRows();
    },
    async run(sql, params) {
      await connection.run(sql, params);
    },
  };
}

/**
 * One DuckDB file opened by this process: DuckDB lets one process open a file for writing, so the
 * instance holds the file's lock for the server's life. Writes go through one writer connection, one
 * transaction at a time in submission order (no write-write conflicts, and the commit order is the call
 * order); reads take one of a few reader connections, each inside a transaction of its own, so every
 * read sees one committed state (DuckDB's MVCC). Every call is asynchronous (the node API runs queries on
 * DuckDB's threads), so nothing here blocks the event loop.
 *
 * The schema: `index_state` (generation and the next document and chunk keys, bumped in the writing
 * transaction so keys are never reused, not even after deletes and restarts), `documents`, `chunks`,
 * and `chunk_vectors` with a fixed-size `FLOAT[dim]` embedding column for the array functions.
 */
export class DuckDbDatabase {
  private writeQueue: Promise<unknown> = Promise.resolve();
  private readonly idle: DuckDBConnection[];
  private readonly waiting: Array<(c: DuckDBConnection) => void> = [];
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    readers: DuckDBConnection[],
    readonly dimension: number,
  ) {
    this.idle = readers;
  }

  static async open(opts: DuckDbDatabaseOptions): Promise<DuckDbDatabase> {
    if (!Number.isInteger(opts.dimension) || opts.dimension <= 0) throw new RangeError(`dimension must be a positive integer, got ${opts.dimension}`);
    const instance = await DuckDBInstance.create(opts.path, { threads: String(opts.threads ?? 2) });
    try {
      const writer = await instance.connect();
      await createSchema(txOf(writer), opts.dimension);
      const readers: DuckDBConnection[] = [];
      for (let i = 0; i < READERS; i++) readers.push(await instance.connect());
      return new DuckDbDatabase(instance, writer, readers, opts.dimension);
    } catch (err) {
      instance.closeSync();
      throw err;
    }
  }

  /**
   * Runs `fn` in one write transaction, after every write submitted before it: committed whole when
   * `fn` resolves, rolled back (nothing written) when it throws. `afterCommit` runs right after the
   * commit, still in commit order, before the next write starts.
   */
  write<T>(fn: (tx: DuckDbTx) => Promise<T>, afterCommit?: (result: T) => void): Promise<T> {
    const run = this.writeQueue.then(async () => {
      if (this.closed) throw new Error("the DuckDB database is closed");
      const tx = txOf(this.writer);
      await tx.run("BEGIN TRANSACTION");
      let result: T;
      try {
        result = await fn(tx);
        await tx.run("COMMIT");
      } catch (err) {
        await tx.run("ROLLBACK").catch(() => undefined);
        throw err;
      }
      afterCommit?.(result);
      return result;
    });
    this.writeQueue = run.catch(() => undefined);
    return run;
  }

  /** Runs `fn` in one read transaction on a reader connection: every statement sees the same committed state. */
  read<T>(fn: (tx: DuckDbTx) => Promise<T>): Promise<T> {
    return this.onReader(async (tx) => {
      await tx.run("BEGIN TRANSACTION");
      try {
        return await fn(tx);
      } finally {
        await tx.run("COMMIT").catch(() => undefined);
      }
    });
  }

  /** Runs one statement on a reader connection (a statement alone is atomic: no transaction round trips). */
  query(sql: string, params?: DuckDBValue[]): Promise<DuckDBValue[][]> {
    return this.onReader((tx) => tx.all(sql, params));
  }

  private async onReader<T>(fn: (tx: DuckDbTx) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error("the DuckDB database is closed");
    const connection = this.idle.pop() ?? (await new Promise<DuckDBConnection>((resolve) => this.waiting.push(resolve)));
    try {
      return await fn(txOf(connection));
    } finally {
      const next = this.waiting.shift();
      if (next) next(connection);
      else this.idle.push(connection);
    }
  }

  /** Waits for queued writes, then closes the connections and the file (a checkpoint makes the file whole). */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.writeQueue;
    this.closed = true;
    await this.writer.run("CHECKPOINT").catch(() => undefined);
    for (const c of this.idle) c.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
  }
}

async function createSchema(tx: DuckDbTx, dimension: number): Promise<void> {
  await tx.run(`
    CREATE TABLE IF NOT EXISTS index_state (
      id INTEGER PRIMARY KEY,
      generation BIGINT NOT NULL,
      next_doc_key BIGINT NOT NULL,
      next_chunk_key BIGINT NOT NULL
    );
    INSERT INTO index_state SELECT 1, 0, 1, 1 WHERE NOT EXISTS (SELECT 1 FROM index_state);
    CREATE TABLE IF NOT EXISTS documents (
      doc_key BIGINT NOT NULL,
      resource_id VARCHAR NOT NULL,
      path VARCHAR NOT NULL,
      content VARCHAR NOT NULL,
      metadata VARCHAR NOT NULL,
      fingerprint VARCHAR NOT NULL,
      created_at BIGINT NOT NULL,
      superseded_at BIGINT
    );
    CREATE TABLE IF NOT EXISTS chunks (
      chunk_key BIGINT NOT NULL,
      doc_key BIGINT NOT NULL,
      resource_id VARCHAR NOT NULL,
      path VARCHAR NOT NULL,
      chunk_index INTEGER NOT NULL,
      text VARCHAR NOT NULL,
      superseded_at BIGINT
    );
    CREATE TABLE IF NOT EXISTS chunk_vectors (
      chunk_key BIGINT NOT NULL,
      resource_id VARCHAR NOT NULL,
      path VARCHAR NOT NULL,
      superseded_at BIGINT,
      embedding FLOAT[${dimension}] NOT NULL
    );
  `);
  const rows = await tx.all("SELECT data_type FROM information_schema.columns WHERE table_name = 'chunk_vectors' AND column_name = 'embedding'");
  const type = String(rows[0]?.[0]);
  if (type !== `FLOAT[${dimension}]`) {
    throw new Error(`the DuckDB file holds ${type} embeddings, the server is configured for ${dimension} dimensions (ACMS_EMBEDDING_DIM)`);
  }
}

/** A list of safe integers as a SQL literal (`[1,2]::BIGINT[]`): keys are inlined rather than bound one value at a time. */
export function keyList(keys: readonly number[]): string {
  for (const k of keys) if (!Number.isSafeInteger(k)) throw new RangeError(`not an integer key: ${k}`);
  return `[${keys.join(",")}]::BIGINT[]`;
}

/** A nullable BIGINT cell as a number. */
export function numberOrNull(v: DuckDBValue): number | null {
  return v === null ? null : Number(v);
}
