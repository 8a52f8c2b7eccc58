import { resolve } from "node:path";

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
  /** Time limit of a SPARQL query, in ms. */
  sparqlTimeoutMs: number;
  /** How long a superseded document version stays visible to `recent` scopes, in ms. */
  recentWindowMs: number;
  /** Keyword index: "native" (the store's, e.g. FTS5) or "memory" (the in-memory BM25 fallback); ACMS_KEYWORD_INDEX. */
  keywordIndex: "native" | "memory";
  /** Origins browsers may call from (`*`: any); undefined: no CORS headers at all. ACMS_CORS_ORIGINS. */
  corsOrigins?: "*" | string[];
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
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^-?[0-9]+$/.test(raw.trim())) throw new Error(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new Error(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
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
    sparqlTimeoutMs: intFrom(env, "ACMS_SPARQL_TIMEOUT_MS", 10000, 10, 600000),
    recentWindowMs: intFrom(env, "ACMS_RECENT_WINDOW_MS", 7 * 24 * 3600 * 1000, 0, 3650 * 24 * 3600 * 1000),
    keywordIndex: keywordIndexFrom(env.ACMS_KEYWORD_INDEX),
    corsOrigins: corsOriginsFrom(env.ACMS_CORS_ORIGINS),
    metricsPort: metricsPortFrom(env, port),
    logLevel: logLevelFrom(env.ACMS_LOG_LEVEL),
    tiers: {
      maxTokensHot: intFrom(env, "ACMS_CONTEXT_MAX_TOKENS_HOT", 8000, 1, 100_000_000),
      maxDecisionsWarm: intFrom(env, "ACMS_CONTEXT_MAX_DECISIONS_WARM", 500, 1, 100_000_000),
      maxDecisionsCold: intFrom(env, "ACMS_CONTEXT_MAX_DECISIONS_COLD", 5000, 1, 100_000_000),
      summaryTokens: intFrom(env, "ACMS_CONTEXT_SUMMARY_TOKENS", 128, 8, 100_000),
    },
  };
}

/** Whether `host` binds only to loopback. */
export function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost" || /^127\./.test(host);
}
