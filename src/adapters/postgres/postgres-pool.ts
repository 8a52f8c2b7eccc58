import pg from "pg";

/** A pg connection pool over one ACMS database. */
export type PostgresPool = pg.Pool;

/** A pooled connection, held for one transaction. */
export type PostgresClient = pg.PoolClient;

const INT8 = 20;

/**
 * Type parsers of this pool only (never pg's global ones, which other code may rely on): int8 columns
 * (chunk keys, ms timestamps) come back as numbers; the generation, which must stay exact, is read as
 * text and turned into a bigint where it is read.
 */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8 && format !== "binary") return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as "text");
  },
} as pg.CustomTypesConfig;

/** Options of the pool. */
export interface PostgresPoolOptions {
  /** Most connections held open (default 10). */
  max?: number;
}

/**
 * Opens a connection pool to `url` (`postgres://user:pass@host:port/db`). An idle connection's error
 * (the server restarting, a network cut) is swallowed here: the pool drops that connection and the next
 * query opens a fresh one, instead of the process crashing on an unhandled 'error' event.
 */
export function openPostgresPool(url: string, opts: PostgresPoolOptions = {}): PostgresPool {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, types, application_name: "acms" });
  pool.on("error", () => undefined);
  return pool;
}

/**
 * Runs `work` in one transaction on one pooled connection: committed when it resolves, rolled back when
 * it throws (the error passes through). `mode` adds e.g. `ISOLATION LEVEL REPEATABLE READ READ ONLY`;
 * `first`, a statement without parameters (a lock), is sent with BEGIN in the same round trip.
 */
export async function inTransaction<T>(
  pool: PostgresPool,
  work: (client: PostgresClient) => Promise<T>,
  mode = "",
  first = "",
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query(first.length > 0 ? `BEGIN ${mode}; ${first}` : `BEGIN ${mode}`);
    const out = await work(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    try {
      await client.query("ROLLBACK");
    } catch {
      broken = true;
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Whether a driver error is a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown }).code === "23505";
}
