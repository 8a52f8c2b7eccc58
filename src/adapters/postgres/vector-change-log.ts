import { inTransaction, type PostgresPool } from "./postgres-pool.js";

/**
 * How long a following server may go unseen before the log stops being kept for it (10 minutes). A
 * server that was only paused that long finds the log pruned past its generation and reloads every
 * vector from the chunk rows, so the horizon bounds the log's size without ever serving stale vectors.
 */
export const DEFAULT_FOLLOWER_HORIZON_MS = 10 * 60_000;

/**
 * Records that server `serverId` has applied the vector change log up to `applied` (seen now, by the
 * database's clock, so servers' clocks never matter). Pruning keeps every row a recently seen server
 * still needs.
 */
export async function recordFollower(pool: PostgresPool, serverId: string, applied: bigint): Promise<void> {
  await pool.query(
    `INSERT INTO vector_followers (server_id, applied, seen_at) VALUES ($1, $2, now())
     ON CONFLICT (server_id) DO UPDATE SET applied = GREATEST(vector_followers.applied, excluded.applied), seen_at = now()`,
    [serverId, applied.toString()],
  );
}

/** Forgets server `serverId` (it stopped: the log need not be kept for it). */
export async function forgetFollower(pool: PostgresPool, serverId: string): Promise<void> {
  await pool.query("DELETE FROM vector_followers WHERE server_id = $1", [serverId]);
}

/**
 * Deletes the vector change log rows every following server has applied: those up to the smallest
 * generation applied by a server seen within `horizonMs` (or up to the current generation when none
 * is). Servers unseen for longer are forgotten. The generation pruned through is recorded in the same
 * transaction, so a follower behind it knows the log no longer holds what it misses and reloads in
 * full. Runs under the writers' lock on `index_state` (a brief wait for one commit). Returns the number
 * of rows deleted.
 */
export async function pruneVectorChanges(pool: PostgresPool, horizonMs = DEFAULT_FOLLOWER_HORIZON_MS): Promise<number> {
  return inTransaction(pool, async (c) => {
    const state = await c.query<{ g: string }>("SELECT generation::text AS g FROM index_state WHERE id = 1 FOR UPDATE");
    await c.query("DELETE FROM vector_followers WHERE seen_at < now() - make_interval(secs => $1::double precision / 1000)", [horizonMs]);
    const { rows } = await c.query<{ safe: string }>(
      "SELECT LEAST($1::bigint, (SELECT min(applied) FROM vector_followers))::text AS safe",
      [state.rows[0].g],
    );
    const safe = rows[0].safe;
    const deleted = await c.query("DELETE FROM vector_changes WHERE generation <= $1", [safe]);
    await c.query("UPDATE index_state SET vector_changes_pruned_through = GREATEST(vector_changes_pruned_through, $1) WHERE id = 1", [
      safe,
    ]);
    return deleted.rowCount ?? 0;
  });
}
