import { resolve } from "node:path";
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "../transport/connection-guard.js";
import { DEFAULT_STORED_SCOPE_CAPS, type StoredScopeCaps } from "../../application/scopes/scope-resolver.js";
import { DEFAULT_QUOTA_LIMITS, type QuotaLimits } from "../quotas/quota-ledger.js";
import { tracingConfigFrom, type TracingConfig } from "../observability/tracing-config.js";
import { DEFAULT_EMBED_SLICE_MS } from "../../application/shared/fair-embedder.js";

/** How much the server logs about calls (see Config.logLevel). */
export type LogLevel = "info" | "debug";

/** Everything the server reads from its environment, validated once at start. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  keysFile?: string;
  /** The deployment's vector dimension. */
  embeddingDim: number;
  /** The cap on max_results, top_k and rrf_k. */
  maxResultsCap: number;
  /** Largest accepted request message, in bytes. */
  maxMessageBytes: number;
  /** Largest accepted JSON request message, in bytes (at most maxMessageBytes): a JSON message is decoded in one step. */
  maxJsonMessageBytes: number;
  /** Time limit of a SPARQL query, in ms, counted from when a graph worker takes it. */
  sparqlTimeoutMs: number;
  /**
   * Embedded graph engine: query workers (ACMS_GRAPH_WORKERS), how long a query may wait for one
   * (ACMS_GRAPH_QUEUE_TIMEOUT_MS), and the slice after which a query may be preempted for another tenant (ACMS_GRAPH_SLICE_MS).
   */
  graph: { workers: number; queueTimeoutMs: number; sliceMs: number };
  /** How long a superseded document version stays visible to `recent` scopes, in ms. */
  recentWindowMs: number;
  /**
   * ACMS_POSTGRES_URL: when set, registry, scopes, documents, BM25, vectors and the tier catalogue live in
   * this PostgreSQL database (see src/adapters/postgres/); the graph and cold files stay under dataDir.
   */
  postgresUrl?: string;
  /**
   * ACMS_DUCKDB_PATH: when set, documents, chunks and vectors live in this DuckDB file (see
   * src/adapters/duckdb/), keyword search on the in-memory BM25; registry, scopes and tiers stay in SQLite.
   */
  duckdbPath?: string;
  /** Keyword index: "native" (the store's, e.g. FTS5) or "memory" (the in-memory BM25 fallback); ACMS_KEYWORD_INDEX. */
  keywordIndex: "native" | "memory";
  /** Origins browsers may call from (`*`: any); undefined: no CORS headers at all. ACMS_CORS_ORIGINS. */
  corsOrigins?: "*" | string[];
  /** The built operator's console served at /console (ACMS_CONSOLE_DIR; default dist/console, built by `npm run build`). */
  consoleDir: string;
  /** The OpenAPI document served at GET /openapi.json (ACMS_OPENAPI_FILE; default openapi/acms.openapi.json). */
  openapiFile: string;
  /** ACMS_MAX_CONNECTIONS_PER_PEER, ACMS_IDLE_TIMEOUT_MS, ACMS_HANDSHAKE_TIMEOUT_MS, ACMS_BODY_TIMEOUT_MS, ACMS_MIN_BODY_RATE. */
  connections: ConnectionLimits;
  /** Where refused calls are logged (ACMS_AUDIT_LOG: a file path, or "stderr"); unset: not logged. */
  auditLog?: string;
  /** Per-principal quotas: ACMS_QUOTA_CONCURRENT, _RATE, _BURST, _RESULT_BYTES, _RESULT_ROWS, _CALL_MS. */
  quotas: QuotaLimits;
  /** Per-principal caps on stored scopes: ACMS_MAX_SCOPES_PER_PRINCIPAL, ACMS_MAX_SCOPE_BYTES_PER_PRINCIPAL. */
  storedScopeCaps: StoredScopeCaps;
  /** The graph on a SPARQL 1.1 Protocol endpoint instead of the embedded Oxigraph; absent: embedded. */
  sparqlEndpoint?: SparqlEndpointConfig;
  /** Port of the Prometheus `/metrics` listener (0 picks a free one); undefined: no metrics at all. ACMS_METRICS_PORT. */
  metricsPort?: number;
  /** "info": one log line per failed or refused call; "debug": one per call. ACMS_LOG_LEVEL (default info). */
  logLevel?: LogLevel;
  tiers: {
    maxTokensHot: number;
    maxDecisionsWarm: number;
    maxDecisionsCold: number;
    /** Token target of the cold-tier summary. */
    summaryTokens: number;
  };
  /** OpenTelemetry tracing from the standard OTEL_* variables (tracingConfigFrom); undefined: no tracing at all. */
  tracing?: TracingConfig;
  /** The server's embedder (ACMS_EMBED_MODEL_DIR or ACMS_EMBEDDINGS_URL); absent: none (clients send vectors). */
  embedder?: EmbedderConfig;
}

/** Which embedder runs, and its knobs (docs/embeddings.md). */
export type EmbedderConfig =
  | {
      kind: "onnx";
      /** ACMS_EMBED_MODEL_DIR: model.onnx and tokenizer.json. */
      modelDir: string;
      /** ACMS_EMBED_WORKERS (default 1): worker threads, each with a session. */
      workers: number;
      /** ACMS_EMBED_THREADS: ONNX Runtime threads per worker (default: cores less one, 1 to 4). */
      threads?: number;
      /** ACMS_EMBED_BATCH (default 16): the most texts per batch. */
      batch: number;
      /** ACMS_EMBED_SLICE_MS (default 100): the model time of one bulk slice, what another tenant's query may wait. */
      sliceMs: number;
      /** ACMS_EMBED_QUERY_WORKERS (default 0): more worker threads, kept for query embeddings (never bulk work). */
      queryWorkers: number;
    }
  | {
      kind: "http";
      /** ACMS_EMBEDDINGS_URL: the API base; requests go to `{url}/embeddings`. */
      url: string;
      /** ACMS_EMBEDDINGS_MODEL. */
      model: string;
      /** ACMS_EMBEDDINGS_API_KEY (never logged). */
      apiKey?: string;
      /** ACMS_EMBEDDINGS_TIMEOUT_MS (default 30000): one request's time limit. */
      timeoutMs: number;
      /** ACMS_EMBEDDINGS_CONCURRENCY (default 2): requests in flight at once. */
      concurrency: number;
      /** ACMS_EMBED_BATCH (default 64): the most texts per request. */
      batch: number;
      /** ACMS_EMBED_SLICE_MS (default 100): the time of one bulk request, what another tenant's query may wait. */
      sliceMs: number;
      /** ACMS_EMBED_QUERY_WORKERS (default 0): more requests in flight, kept for query embeddings (never bulk work). */
      queryWorkers: number;
    };

/** ACMS_EMBED_MODEL_DIR or ACMS_EMBEDDINGS_URL (+ _MODEL, _API_KEY), never both. */
function embedderFrom(env: NodeJS.ProcessEnv): EmbedderConfig | undefined {
  const dir = env.ACMS_EMBED_MODEL_DIR?.trim() || undefined;
  const url = httpUrlFrom(env, "ACMS_EMBEDDINGS_URL");
  if (dir && url) throw new Error("ACMS_EMBED_MODEL_DIR and ACMS_EMBEDDINGS_URL both name an embedder: set one of them");
  if (dir) {
    const threads = env.ACMS_EMBED_THREADS?.trim() ? intFrom(env, "ACMS_EMBED_THREADS", 1, 1, 64) : undefined;
    return {
      kind: "onnx",
      modelDir: resolve(dir),
      workers: intFrom(env, "ACMS_EMBED_WORKERS", 1, 1, 64),
      threads,
      batch: intFrom(env, "ACMS_EMBED_BATCH", 16, 1, 1024),
      sliceMs: intFrom(env, "ACMS_EMBED_SLICE_MS", DEFAULT_EMBED_SLICE_MS, 1, 600_000),
      queryWorkers: intFrom(env, "ACMS_EMBED_QUERY_WORKERS", 0, 0, 16),
    };
  }
  if (url) {
    const model = env.ACMS_EMBEDDINGS_MODEL?.trim();
    if (!model) throw new Error("ACMS_EMBEDDINGS_MODEL must be set with ACMS_EMBEDDINGS_URL (the model name the endpoint serves)");
    return {
      kind: "http",
      url,
      model,
      apiKey: env.ACMS_EMBEDDINGS_API_KEY && env.ACMS_EMBEDDINGS_API_KEY.length > 0 ? env.ACMS_EMBEDDINGS_API_KEY : undefined,
      timeoutMs: intFrom(env, "ACMS_EMBEDDINGS_TIMEOUT_MS", 30_000, 100, 600_000),
      concurrency: intFrom(env, "ACMS_EMBEDDINGS_CONCURRENCY", 2, 1, 64),
      batch: intFrom(env, "ACMS_EMBED_BATCH", 64, 1, 2048),
      sliceMs: intFrom(env, "ACMS_EMBED_SLICE_MS", DEFAULT_EMBED_SLICE_MS, 1, 600_000),
      queryWorkers: intFrom(env, "ACMS_EMBED_QUERY_WORKERS", 0, 0, 16),
    };
  }
  for (const name of ["ACMS_EMBEDDINGS_MODEL", "ACMS_EMBEDDINGS_API_KEY"])
    if (env[name]?.trim()) throw new Error(`${name} is set but ACMS_EMBEDDINGS_URL is not`);
  return undefined;
}

/** ACMS_SPARQL_QUERY_URL, ACMS_SPARQL_UPDATE_URL, ACMS_SPARQL_USER, ACMS_SPARQL_PASSWORD. */
export interface SparqlEndpointConfig {
  queryUrl: string;
  /** Defaults to the query URL (Virtuoso serves both on one URL). */
  updateUrl: string;
  user?: string;
  password?: string;
  /** ACMS_SPARQL_CONCURRENCY (default 8): queries sent to the endpoint at once, shared fairly between callers. */
  concurrency: number;
}

function httpUrlFrom(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    // The value is not echoed: a malformed URL may still hold a password.
    throw new Error(`${name} must be an http or https URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Error(`${name} must be an http or https URL, got "${url.protocol}" URL`);
  if (url.username !== "" || url.password !== "")
    throw new Error(
      `${name} must not hold credentials: set ${name === "ACMS_EMBEDDINGS_URL" ? "ACMS_EMBEDDINGS_API_KEY" : "ACMS_SPARQL_USER and ACMS_SPARQL_PASSWORD"}`,
    );
  return url.toString();
}

/** The SPARQL endpoint settings, or undefined when ACMS_SPARQL_QUERY_URL is unset (the embedded graph). */
function sparqlEndpointFrom(env: NodeJS.ProcessEnv): SparqlEndpointConfig | undefined {
  const queryUrl = httpUrlFrom(env, "ACMS_SPARQL_QUERY_URL");
  const updateUrl = httpUrlFrom(env, "ACMS_SPARQL_UPDATE_URL");
  const user = env.ACMS_SPARQL_USER && env.ACMS_SPARQL_USER.length > 0 ? env.ACMS_SPARQL_USER : undefined;
  const password = env.ACMS_SPARQL_PASSWORD && env.ACMS_SPARQL_PASSWORD.length > 0 ? env.ACMS_SPARQL_PASSWORD : undefined;
  if (!queryUrl) {
    if (updateUrl || user || password)
      throw new Error("ACMS_SPARQL_QUERY_URL must be set when ACMS_SPARQL_UPDATE_URL, ACMS_SPARQL_USER or ACMS_SPARQL_PASSWORD is");
    return undefined;
  }
  if ((user === undefined) !== (password === undefined)) throw new Error("ACMS_SPARQL_USER and ACMS_SPARQL_PASSWORD must be set together");
  const concurrency = intFrom(env, "ACMS_SPARQL_CONCURRENCY", 8, 1, 256);
  return { queryUrl, updateUrl: updateUrl ?? queryUrl, user, password, concurrency };
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^-?[0-9]+$/.test(raw.trim())) throw new Error(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new Error(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function postgresUrlFrom(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^postgres(ql)?:\/\/[^\s]+$/.test(raw.trim())) throw new Error("ACMS_POSTGRES_URL must be a postgres://user:pass@host:port/db URL");
  return raw.trim();
}

function duckdbPathFrom(raw: string | undefined, postgresUrl: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (postgresUrl !== undefined) throw new Error("ACMS_DUCKDB_PATH and ACMS_POSTGRES_URL both name a document store: set one of them");
  return resolve(raw.trim());
}

function keywordIndexFrom(raw: string | undefined): "native" | "memory" {
  if (raw === undefined || raw === "" || raw === "native") return "native";
  if (raw === "memory") return "memory";
  throw new Error(`ACMS_KEYWORD_INDEX must be "native" or "memory", got "${raw}"`);
}

function logLevelFrom(raw: string | undefined): LogLevel {
  if (raw === undefined || raw === "" || raw === "info") return "info";
  if (raw === "debug") return "debug";
  throw new Error(`ACMS_LOG_LEVEL must be "info" or "debug", got "${raw}"`);
}

/** ACMS_METRICS_PORT: unset or blank is no metrics listener; a set port must not be the API's own. */
function metricsPortFrom(env: NodeJS.ProcessEnv, apiPort: number): number | undefined {
  if (env.ACMS_METRICS_PORT === undefined || env.ACMS_METRICS_PORT.trim() === "") return undefined;
  const port = intFrom(env, "ACMS_METRICS_PORT", 0, 0, 65535);
  if (port !== 0 && port === apiPort) throw new Error(`ACMS_METRICS_PORT must differ from ACMS_PORT, both are ${port}`);
  return port;
}

/**
 * ACMS_CORS_ORIGINS: `*`, or comma-separated origins (`scheme://host[:port]`, exactly as browsers send them in
 * the Origin header, so a trailing slash or a path is refused rather than silently never matching).
 */
function corsOriginsFrom(raw: string | undefined): "*" | string[] | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (raw.trim() === "*") return "*";
  return raw.split(",").map((entry) => {
    const origin = entry.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:") || parsed.origin !== origin) {
      throw new Error(`ACMS_CORS_ORIGINS must be "*" or comma-separated origins like https://app.example.com, got "${origin}"`);
    }
    return origin;
  });
}

/**
 * Reads the configuration from environment variables (flags are mapped onto the same names by the CLI).
 * Throws an Error with a one-line message on any bad value.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFrom(env, "ACMS_PORT", 50051, 0, 65535);
  return {
    host: env.ACMS_HOST && env.ACMS_HOST.length > 0 ? env.ACMS_HOST : "127.0.0.1",
    port,
    dataDir: resolve(env.ACMS_DATA_DIR && env.ACMS_DATA_DIR.length > 0 ? env.ACMS_DATA_DIR : "./.acms"),
    keysFile: env.ACMS_KEYS_FILE && env.ACMS_KEYS_FILE.length > 0 ? env.ACMS_KEYS_FILE : undefined,
    embeddingDim: intFrom(env, "ACMS_EMBEDDING_DIM", 384, 1, 8192),
    maxResultsCap: intFrom(env, "ACMS_MAX_RESULTS", 1000, 1, 100000),
    maxMessageBytes: intFrom(env, "ACMS_MAX_MESSAGE_BYTES", 16 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    maxJsonMessageBytes: intFrom(env, "ACMS_MAX_JSON_MESSAGE_BYTES", 1024 * 1024, 1024, 512 * 1024 * 1024),
    sparqlTimeoutMs: intFrom(env, "ACMS_SPARQL_TIMEOUT_MS", 10000, 10, 600000),
    graph: {
      workers: intFrom(env, "ACMS_GRAPH_WORKERS", 2, 1, 64),
      queueTimeoutMs: intFrom(env, "ACMS_GRAPH_QUEUE_TIMEOUT_MS", 30_000, 10, 3_600_000),
      sliceMs: intFrom(env, "ACMS_GRAPH_SLICE_MS", 250, 1, 600_000),
    },
    recentWindowMs: intFrom(env, "ACMS_RECENT_WINDOW_MS", 7 * 24 * 3600 * 1000, 0, 3650 * 24 * 3600 * 1000),
    postgresUrl: postgresUrlFrom(env.ACMS_POSTGRES_URL),
    duckdbPath: duckdbPathFrom(env.ACMS_DUCKDB_PATH, postgresUrlFrom(env.ACMS_POSTGRES_URL)),
    keywordIndex: keywordIndexFrom(env.ACMS_KEYWORD_INDEX),
    corsOrigins: corsOriginsFrom(env.ACMS_CORS_ORIGINS),
    consoleDir: resolve(env.ACMS_CONSOLE_DIR && env.ACMS_CONSOLE_DIR.length > 0 ? env.ACMS_CONSOLE_DIR : "dist/console"),
    openapiFile: resolve(env.ACMS_OPENAPI_FILE && env.ACMS_OPENAPI_FILE.length > 0 ? env.ACMS_OPENAPI_FILE : "openapi/acms.openapi.json"),
    connections: {
      maxPerPeer: intFrom(env, "ACMS_MAX_CONNECTIONS_PER_PEER", DEFAULT_CONNECTION_LIMITS.maxPerPeer, 1, 1_000_000),
      idleTimeoutMs: intFrom(env, "ACMS_IDLE_TIMEOUT_MS", DEFAULT_CONNECTION_LIMITS.idleTimeoutMs, 100, 24 * 3600 * 1000),
      handshakeTimeoutMs: intFrom(env, "ACMS_HANDSHAKE_TIMEOUT_MS", DEFAULT_CONNECTION_LIMITS.handshakeTimeoutMs, 100, 600_000),
      bodyTimeoutMs: intFrom(env, "ACMS_BODY_TIMEOUT_MS", DEFAULT_CONNECTION_LIMITS.bodyTimeoutMs, 100, 3_600_000),
      minBodyBytesPerSecond: intFrom(env, "ACMS_MIN_BODY_RATE", DEFAULT_CONNECTION_LIMITS.minBodyBytesPerSecond, 0, 1_000_000_000),
    },
    auditLog: env.ACMS_AUDIT_LOG && env.ACMS_AUDIT_LOG.length > 0 ? env.ACMS_AUDIT_LOG : undefined,
    quotas: {
      concurrent: intFrom(env, "ACMS_QUOTA_CONCURRENT", DEFAULT_QUOTA_LIMITS.concurrent, 1, 1_000_000),
      ratePerSecond: intFrom(env, "ACMS_QUOTA_RATE", DEFAULT_QUOTA_LIMITS.ratePerSecond, 1, 1_000_000),
      burst: intFrom(env, "ACMS_QUOTA_BURST", DEFAULT_QUOTA_LIMITS.burst, 1, 10_000_000),
      resultBytes: intFrom(env, "ACMS_QUOTA_RESULT_BYTES", DEFAULT_QUOTA_LIMITS.resultBytes, 1024, 4 * 1024 * 1024 * 1024),
      resultRows: intFrom(env, "ACMS_QUOTA_RESULT_ROWS", DEFAULT_QUOTA_LIMITS.resultRows, 1, 100_000_000),
      callMs: intFrom(env, "ACMS_QUOTA_CALL_MS", DEFAULT_QUOTA_LIMITS.callMs, 10, 24 * 3600 * 1000),
    },
    storedScopeCaps: {
      maxScopes: intFrom(env, "ACMS_MAX_SCOPES_PER_PRINCIPAL", DEFAULT_STORED_SCOPE_CAPS.maxScopes, 1, 100_000_000),
      maxBytes: intFrom(env, "ACMS_MAX_SCOPE_BYTES_PER_PRINCIPAL", DEFAULT_STORED_SCOPE_CAPS.maxBytes, 1024, 1024 * 1024 * 1024 * 1024),
    },
    sparqlEndpoint: sparqlEndpointFrom(env),
    metricsPort: metricsPortFrom(env, port),
    logLevel: logLevelFrom(env.ACMS_LOG_LEVEL),
    tiers: {
      maxTokensHot: intFrom(env, "ACMS_CONTEXT_MAX_TOKENS_HOT", 8000, 1, 100_000_000),
      maxDecisionsWarm: intFrom(env, "ACMS_CONTEXT_MAX_DECISIONS_WARM", 500, 1, 100_000_000),
      maxDecisionsCold: intFrom(env, "ACMS_CONTEXT_MAX_DECISIONS_COLD", 5000, 1, 100_000_000),
      summaryTokens: intFrom(env, "ACMS_CONTEXT_SUMMARY_TOKENS", 128, 8, 100_000),
    },
    tracing: tracingConfigFrom(env),
    embedder: embedderFrom(env),
  };
}

/** Whether `host` binds only to loopback. */
export function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost" || /^127\./.test(host);
}
