import type { PostgresClient, PostgresPool } from "./postgres-pool.js";

/** One schema version: applied once, in order, in its own transaction. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The schema, version by version. Append new versions; never edit an applied one (a database records
 * which versions it has in `acms_schema_migrations`). Times are ms since the epoch (bigint), as in the
 * embedded store; text compares byte-wise (`COLLATE "C"`) where order is part of the contract.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "registry and scopes",
    sql: `
      CREATE TABLE registry_projects (
        name text COLLATE "C" PRIMARY KEY,
        created_at bigint NOT NULL
      );
      CREATE TABLE registry_resources (
        id text COLLATE "C" PRIMARY KEY,
        owner_project text COLLATE "C" NOT NULL REFERENCES registry_projects (name),
        kind text NOT NULL,
        metadata text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE TABLE registry_links (
        seq bigserial PRIMARY KEY,
        project text COLLATE "C" NOT NULL REFERENCES registry_projects (name),
        resource_id text COLLATE "C" NOT NULL REFERENCES registry_resources (id),
        alias text COLLATE "C" NOT NULL,
        UNIQUE (project, resource_id),
        UNIQUE (project, alias)
      );
      CREATE INDEX registry_links_by_resource ON registry_links (resource_id, seq);
      CREATE TABLE registry_parents (
        child_id text COLLATE "C" NOT NULL REFERENCES registry_resources (id),
        parent_id text COLLATE "C" NOT NULL REFERENCES registry_resources (id),
        position integer NOT NULL,
        PRIMARY KEY (child_id, parent_id)
      );
      CREATE INDEX registry_parents_by_parent ON registry_parents (parent_id);
      CREATE TABLE scopes (
        scope_id text COLLATE "C" PRIMARY KEY,
        owner text NOT NULL,
        body text NOT NULL,
        created_at bigint NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: "documents, chunks, versions and BM25 term statistics",
    sql: `
      CREATE TABLE index_state (
        id integer PRIMARY KEY CHECK (id = 1),
        generation bigint NOT NULL,
        keyword_rows bigint NOT NULL,
        keyword_tokens bigint NOT NULL
      );
      INSERT INTO index_state (id, generation, keyword_rows, keyword_tokens) VALUES (1, 0, 0, 0);
      CREATE TABLE documents (
        doc_key bigserial PRIMARY KEY,
        resource_id text COLLATE "C" NOT NULL,
        path text COLLATE "C" NOT NULL,
        content text NOT NULL,
        metadata text NOT NULL,
        fingerprint text NOT NULL,
        created_at bigint NOT NULL,
        superseded_at bigint
      );
      CREATE UNIQUE INDEX documents_live ON documents (resource_id, path) WHERE superseded_at IS NULL;
      CREATE INDEX documents_versions ON documents (resource_id, path, superseded_at);
      CREATE TABLE chunks (
        chunk_key bigserial PRIMARY KEY,
        doc_key bigint NOT NULL REFERENCES documents (doc_key) ON DELETE CASCADE,
        resource_id text COLLATE "C" NOT NULL,
        path text COLLATE "C" NOT NULL,
        chunk_index integer NOT NULL,
        text text NOT NULL,
        embedding bytea,
        superseded_at bigint
      );
      CREATE INDEX chunks_by_doc ON chunks (doc_key);
      CREATE INDEX chunks_by_resource ON chunks (resource_id, chunk_key);
      CREATE INDEX chunks_with_vectors ON chunks (chunk_key) WHERE embedding IS NOT NULL;
      -- The keyword index: one row per indexed chunk version with its length in tokens (body tokens plus
      -- the one resource tag token FTS5's second column holds), and one posting per (term, row).
      CREATE TABLE keyword_rows (
        chunk_key bigint PRIMARY KEY REFERENCES chunks (chunk_key) ON DELETE CASCADE,
        resource_id text COLLATE "C" NOT NULL,
        length integer NOT NULL
      );
      CREATE INDEX keyword_rows_by_resource ON keyword_rows (resource_id);
      CREATE TABLE postings (
        term text COLLATE "C" NOT NULL,
        resource_id text COLLATE "C" NOT NULL,
        chunk_key bigint NOT NULL REFERENCES keyword_rows (chunk_key) ON DELETE CASCADE,
        positions integer[] NOT NULL,
        PRIMARY KEY (term, resource_id, chunk_key)
      );
      CREATE INDEX postings_by_chunk ON postings (chunk_key);
    `,
  },
  {
    version: 3,
    name: "tier catalogue (hot written through, warm content; cold content in files)",
    sql: `
      CREATE TABLE tier_fragments (
        owner text COLLATE "C" NOT NULL CHECK (length(owner) > 0),
        id text COLLATE "C" NOT NULL,
        tier text NOT NULL CHECK (tier IN ('hot', 'warm', 'cold')),
        project_name text NOT NULL,
        resource_id text NOT NULL,
        metadata text NOT NULL,
        content text,
        cold_file text,
        summary text NOT NULL,
        token_count integer NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        last_accessed_at bigint NOT NULL,
        access_seq bigint NOT NULL,
        PRIMARY KEY (owner, id),
        CHECK ((tier = 'cold' AND content IS NULL AND cold_file IS NOT NULL)
            OR (tier <> 'cold' AND content IS NOT NULL AND cold_file IS NULL))
      );
      CREATE INDEX tier_fragments_by_access ON tier_fragments (access_seq);
    `,
  },
  {
    version: 4,
    name: "vector change log (what each committed write changed, for in-process vector copies on other servers)",
    sql: `
      CREATE TABLE vector_changes (
        generation bigint PRIMARY KEY,
        resource_reloaded text,
        added bigint[] NOT NULL,
        superseded bigint[] NOT NULL,
        removed bigint[] NOT NULL,
        at bigint NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "document frequency per term (BM25's IDF without counting postings at query time)",
    sql: `
      CREATE TABLE term_df (
        term text COLLATE "C" PRIMARY KEY,
        df bigint NOT NULL CHECK (df >= 0)
      );
      INSERT INTO term_df (term, df) SELECT term, count(*) FROM postings GROUP BY term;
    `,
  },
  {
    version: 6,
    name: "vector change log pruning (the servers following it, and the generation it is pruned through)",
    sql: `
      ALTER TABLE index_state ADD COLUMN vector_changes_pruned_through bigint NOT NULL DEFAULT 0;
      CREATE TABLE vector_followers (
        server_id text COLLATE "C" PRIMARY KEY,
        applied bigint NOT NULL,
        seen_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: "cold tier content in the table (compressed), shared by every server",
    sql: `
      ALTER TABLE tier_fragments ADD COLUMN cold_content bytea;
      -- Compressed by the server already: stored out of line as it is, never compressed twice.
      ALTER TABLE tier_fragments ALTER COLUMN cold_content SET STORAGE EXTERNAL;
      ALTER TABLE tier_fragments DROP CONSTRAINT tier_fragments_check;
      -- A cold row holds its content compressed, or (written by an earlier version, until the next start
      -- moves it in) names a file under that server's data directory.
      ALTER TABLE tier_fragments ADD CONSTRAINT tier_fragments_one_copy CHECK (
        (tier = 'cold' AND content IS NULL AND (cold_file IS NULL) <> (cold_content IS NULL))
        OR (tier <> 'cold' AND content IS NOT NULL AND cold_file IS NULL AND cold_content IS NULL));
    `,
  },
  {
    version: 8,
    name: "tier changes numbered, so every server follows the others' placement",
    sql: `
      -- Every write of a fragment row (store, move, read) takes the next number; so does every deletion,
      -- recorded in tier_removals. Numbers are taken under the tier advisory lock, so they commit in order.
      CREATE SEQUENCE tier_change_seq;
      ALTER TABLE tier_fragments ADD COLUMN change_seq bigint NOT NULL DEFAULT 0;
      CREATE INDEX tier_fragments_by_change ON tier_fragments (change_seq);
      CREATE TABLE tier_removals (
        change_seq bigint PRIMARY KEY,
        owner text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL
      );
      -- Old removals are pruned: a server that last looked before this number reloads every fragment.
      CREATE TABLE tier_sync (
        id integer PRIMARY KEY CHECK (id = 1),
        removals_pruned_through bigint NOT NULL
      );
      INSERT INTO tier_sync VALUES (1, 0);
    `,
  },
  {
    version: 9,
    name: "scopes by owner (a key's stored scopes, paged, for the console)",
    sql: `
      CREATE INDEX scopes_by_owner ON scopes (owner, scope_id);
    `,
  },
  {
    version: 10,
    name: "tier counters (hits, misses, moves) shared by every server",
    sql: `
      -- One row per counter pool (a principal's project) and counter name, added to in the tier operation's
      -- transaction, so GetMetrics through any server counts what every server did.
      CREATE TABLE tier_counters (
        pool text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (pool, name)
      );
    `,
  },
  {
    version: 11,
    name: "scope sizes per owner (per-principal caps on stored scopes)",
    sql: `
      ALTER TABLE scopes ADD COLUMN body_bytes bigint;
      UPDATE scopes SET body_bytes = octet_length(body);
      ALTER TABLE scopes ALTER COLUMN body_bytes SET NOT NULL;
      -- Each owner's count and bytes from the index alone: the bodies are never read to sum them.
      CREATE INDEX scopes_usage ON scopes (owner) INCLUDE (body_bytes);
    `,
  },
  {
    version: 12,
    name: "erasure intents (a resource being erased: its links removed, NULL while not erasing)",
    sql: `
      ALTER TABLE registry_resources ADD COLUMN erasing integer;
      CREATE INDEX registry_resources_erasing ON registry_resources (id) WHERE erasing IS NOT NULL;
    `,
  },
  {
    version: 13,
    name: "keyword rows and tokens per resource (BM25 statistics of a scope's resources only)",
    sql: `
      -- Filled under the writers' lock, so no write commits between the count and the table.
      SELECT 1 FROM index_state WHERE id = 1 FOR UPDATE;
      -- One row per resource that has keyword rows: its rows (every retained version) and their summed
      -- lengths, kept in the write transactions that keep index_state's totals.
      CREATE TABLE resource_keyword_stats (
        resource_id text COLLATE "C" PRIMARY KEY,
        row_count bigint NOT NULL,
        token_count bigint NOT NULL
      );
      INSERT INTO resource_keyword_stats (resource_id, row_count, token_count)
        SELECT resource_id, count(*), sum(length) FROM keyword_rows GROUP BY resource_id;
    `,
  },
];

/** The advisory lock key every server takes around migrations ("acms" in ASCII). */
const MIGRATION_LOCK = 0x61636d73;

/**
 * Runs `work` on one connection while holding the schema advisory lock, so schema changes made at start
 * (migrations, the pgvector table whose dimension comes from config) never race another server's.
 */
export async function withSchemaLock<T>(pool: PostgresPool, work: (client: PostgresClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      return await work(client);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/**
 * Brings the database's schema up to the newest version. Safe when several servers start at once: each
 * takes a session-level advisory lock first, so one applies the missing versions (each in its own
 * transaction, recorded in `acms_schema_migrations`) while the others wait and then find nothing to do.
 * A database newer than this code (a version it does not know) is refused rather than written to.
 * Returns the versions this call applied.
 */
export async function migrate(pool: PostgresPool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return withSchemaLock(pool, async (client) => {
    await client.query(`CREATE TABLE IF NOT EXISTS acms_schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set(
      (await client.query<{ version: number }>("SELECT version FROM acms_schema_migrations")).rows.map((r) => r.version),
    );
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...done].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new Error(
        `the database has schema version ${Math.max(...unknown)}, newer than this server knows (${Math.max(...known)}): upgrade the server`,
      );
    }
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query("INSERT INTO acms_schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`schema migration ${m.version} (${m.name}) failed: ${(err as Error).message}`);
      }
      applied.push(m.version);
    }
    return applied;
  });
}
