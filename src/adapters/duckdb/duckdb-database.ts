import {
  DuckDBDataChunk,
  DuckDBInstance,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";

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
  /**
   * Appends rows to `table` (its columns in order, of `types`), given column by column: DuckDB's
   * appender fed whole data chunks, so a value is a write into a vector's buffer (a `FLOAT[n]` cell fills
   * the child vector's Float32Array) rather than a native value made per cell, or per float of an
   * array cell, as the row-by-row appender makes them. Inside the transaction like any statement.
   */
  append(table: string, types: readonly DuckDBType[], columns: ReadonlyArray<readonly DuckDBValue[]>): Promise<void>;
}

/** The counters of `index_state`: the generation and the next document and chunk keys. */
export interface IndexState {
  generation: bigint;
  nextDocKey: number;
  nextChunkKey: number;
}

/** A write transaction: statements, and the index state it moves (written with its commit). */
export interface DuckDbWriteTx extends DuckDbTx {
  /** This transaction's copy of the counters: change it to bump the generation or take keys. */
  readonly state: IndexState;
}

/** Rows per data chunk: DuckDB's standard vector size, the most one chunk holds (a larger count is refused, never truncated). */
const CHUNK_ROWS = 2048;
/** Prepared statements kept per connection (the statement texts with parameters are few and fixed). */
const PREPARED_PER_CONNECTION = 64;

/**
 * Statements of one connection. One with parameters is prepared once and kept (the API's run with
 * parameters extracts, prepares and executes: three trips to DuckDB's threads where a kept statement
 * takes one); one without parameters runs as a plain query (one trip).
 */
class Statements {
  private readonly prepared = new Map<string, DuckDBPreparedStatement>();

  constructor(readonly connection: DuckDBConnection) {}

  async all(sql: string, params?: DuckDBValue[]): Promise<DuckDBValue[][]> {
    if (!params) return (await this.connection.runAndReadAll(sql)).getRows();
    const statement = await this.statement(sql);
    statement.bind(params);
    return (await statement.runAndReadAll()).getRows();
  }

  async run(sql: string, params?: DuckDBValue[]): Promise<void> {
    if (!params) {
      await this.connection.run(sql);
      return;
    }
    const statement = await this.statement(sql);
    statement.bind(params);
    await statement.run();
  }

  private async statement(sql: string): Promise<DuckDBPreparedStatement> {
    let statement = this.prepared.get(sql);
    if (statement) {
      // Most recently used last: the first one is the one to drop.
      this.prepared.delete(sql);
    } else {
      statement = await this.connection.prepare(sql);
      if (this.prepared.size >= PREPARED_PER_CONNECTION) {
        const [oldest, dropped] = this.prepared.entries().next().value as [string, DuckDBPreparedStatement];
        this.prepared.delete(oldest);
        dropped.destroySync();
      }
    }
    this.prepared.set(sql, statement);
    return statement;
  }

  close(): void {
    for (const s of this.prepared.values()) s.destroySync();
    this.prepared.clear();
    this.connection.closeSync();
  }
}

function txOf(statements: Statements): DuckDbTx {
  const connection = statements.connection;
  return {
    all: (sql, params) => statements.all(sql, params),
    run: (sql, params) => statements.run(sql, params),
    async append(table, types, columns) {
      const rows = columns[0]?.length ?? 0;
      if (rows === 0) return;
      const appender = await connection.createAppender(table);
      try {
        for (let start = 0; start < rows; start += CHUNK_ROWS) {
          const chunk = DuckDBDataChunk.create([...types]);
          chunk.setColumns(columns.map((c) => c.slice(start, start + CHUNK_ROWS)));
          appender.appendDataChunk(chunk);
        }
        appender.closeSync();
      } catch (err) {
        appender.clear();
        throw err;
      }
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
  private readonly idle: Statements[];
  private readonly waiting: Array<(c: Statements) => void> = [];
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: Statements,
    readers: Statements[],
    readonly dimension: number,
    private committedState: IndexState,
  ) {
    this.idle = readers;
  }

  static async open(opts: DuckDbDatabaseOptions): Promise<DuckDbDatabase> {
    if (!Number.isInteger(opts.dimension) || opts.dimension <= 0)
      throw new RangeError(`dimension must be a positive integer, got ${opts.dimension}`);
    const instance = await DuckDBInstance.create(opts.path, { threads: String(opts.threads ?? 2) });
    try {
      const writer = new Statements(await instance.connect());
      const state = await createSchema(txOf(writer), opts.dimension);
      const readers: Statements[] = [];
      for (let i = 0; i < READERS; i++) readers.push(new Statements(await instance.connect()));
      return new DuckDbDatabase(instance, writer, readers, opts.dimension, state);
    } catch (err) {
      instance.closeSync();
      throw err;
    }
  }

  /** The generation last committed (this instance is the file's one writer, so it is never stale). */
  get generation(): bigint {
    return this.committedState.generation;
  }

  /**
   * Runs `fn` in one write transaction, after every write submitted before it: committed whole when
   * `fn` resolves, rolled back (nothing written) when it throws. `afterCommit` runs right after the
   * commit, still in commit order, before the next write starts. The counters of `index_state` live
   * here between writes (one process holds the file, and its writes are these, one at a time): a
   * transaction reads them from `tx.state` and what it changed there is written in the statement that
   * commits it, so keys and generations advance exactly when the transaction commits.
   */
  write<T>(fn: (tx: DuckDbWriteTx) => Promise<T>, afterCommit?: (result: T) => void): Promise<T> {
    const run = this.writeQueue.then(async () => {
      if (this.closed) throw new Error("the DuckDB database is closed");
      const before = this.committedState;
      const state = { ...before };
      const tx: DuckDbWriteTx = { ...txOf(this.writer), state };
      await tx.run("BEGIN TRANSACTION");
      let result: T;
      try {
        result = await fn(tx);
        const moved =
          state.generation !== before.generation || state.nextDocKey !== before.nextDocKey || state.nextChunkKey !== before.nextChunkKey;
        for (const [name, v] of [
          ["generation", state.generation],
          ["next document key", state.nextDocKey],
          ["next chunk key", state.nextChunkKey],
        ] as const) {
          if (typeof v === "number" ? !Number.isSafeInteger(v) : typeof v !== "bigint")
            throw new RangeError(`${name} is not an integer: ${v}`);
        }
        await tx.run(
          moved
            ? `UPDATE index_state SET generation = ${state.generation}, next_doc_key = ${state.nextDocKey}, next_chunk_key = ${state.nextChunkKey} WHERE id = 1; COMMIT`
            : "COMMIT",
        );
      } catch (err) {
        await tx.run("ROLLBACK").catch(() => undefined);
        throw err;
      }
      this.committedState = state;
      afterCommit?.(result);
      return result;
    });
    this.writeQueue = run.catch(() => undefined);
    return run;
  }

  /** Runs a checkpoint after every write queued before it (outside any transaction): the WAL is folded into the file. */
  checkpoint(): Promise<void> {
    const run = this.writeQueue.then(async () => {
      if (this.closed) return;
      await this.writer.run("FORCE CHECKPOINT");
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
    const reader = this.idle.pop() ?? (await new Promise<Statements>((resolve) => this.waiting.push(resolve)));
    try {
      return await fn(txOf(reader));
    } finally {
      const next = this.waiting.shift();
      if (next) next(reader);
      else this.idle.push(reader);
    }
  }

  /** Waits for queued writes, then closes the connections and the file (a checkpoint makes the file whole). */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.writeQueue;
    this.closed = true;
    await this.writer.run("CHECKPOINT").catch(() => undefined);
    for (const c of this.idle) c.close();
    this.writer.close();
    this.instance.closeSync();
  }
}

async function createSchema(tx: DuckDbTx, dimension: number): Promise<IndexState> {
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
  const rows = await tx.all(
    "SELECT data_type FROM information_schema.columns WHERE table_name = 'chunk_vectors' AND column_name = 'embedding'",
  );
  const type = String(rows[0]?.[0]);
  if (type !== `FLOAT[${dimension}]`) {
    throw new Error(`the DuckDB file holds ${type} embeddings, the server is configured for ${dimension} dimensions (ACMS_EMBEDDING_DIM)`);
  }
  const state = await tx.all("SELECT generation, next_doc_key, next_chunk_key FROM index_state WHERE id = 1");
  return { generation: BigInt(state[0][0] as bigint), nextDocKey: Number(state[0][1]), nextChunkKey: Number(state[0][2]) };
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
