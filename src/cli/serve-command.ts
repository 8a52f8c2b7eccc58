import type { Command } from "commander";
import type { CliIo } from "./cli-io.js";

/**
 * Adds `acms serve` to the program. The server (SQLite, usearch, Oxigraph, the routes) is imported only when
 * `serve` runs, so no other subcommand, and no `--help`, pays for loading it.
 */
export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command("serve")
    .description("serve the ACMS API (gRPC, gRPC-Web and Connect on one port) on the embedded default backends")
    .option("--host <host>", "address to listen on (ACMS_HOST, default 127.0.0.1)")
    .option("--port <port>", "port to listen on, 0 picks a free one (ACMS_PORT, default 50051)")
    .option("--data-dir <dir>", "where the embedded backends keep their data (ACMS_DATA_DIR, default ./.acms)")
    .option("--keys-file <file>", "JSON file of hashed API keys (ACMS_KEYS_FILE)")
    .option("--embedding-dim <n>", "the deployment's vector dimension (ACMS_EMBEDDING_DIM, default 384)")
    .option(
      "--sparql-query-url <url>",
      "keep the graph on this SPARQL 1.1 endpoint instead of the embedded Oxigraph (ACMS_SPARQL_QUERY_URL)",
    )
    .option("--sparql-update-url <url>", "the endpoint's SPARQL Update URL (ACMS_SPARQL_UPDATE_URL, default the query URL)")
    .option("--sparql-user <user>", "the endpoint user; its password is read from ACMS_SPARQL_PASSWORD only (ACMS_SPARQL_USER)")
    .option(
      "--postgres-url <url>",
      "keep registry, scopes, documents, BM25, vectors and tiers in this PostgreSQL database (ACMS_POSTGRES_URL)",
    )
    .option("--duckdb-path <file>", "keep documents, chunks and vectors in this DuckDB file, keyword search in memory (ACMS_DUCKDB_PATH)")
    .option("--metrics-port <port>", "serve Prometheus metrics at GET /metrics on this port (ACMS_METRICS_PORT, default off)")
    .action(async (flags: Record<string, string | undefined>) => {
      const [{ runServe }, { formatCliError }] = await Promise.all([import("./serve.js"), import("./cli-error.js")]);
      try {
        await runServe({ ...flags, io, handleSignals: true });
      } catch (err) {
        io.stderr.write(`${formatCliError(err)}\n`);
        io.setExitCode(1);
      }
    });
}
