import { resolve } from "node:path";

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
  /** The graph on a SPARQL 1.1 Protocol endpoint instead of the embedded Oxigraph; absent: embedded. */
  sparqlEndpoint?: SparqlEndpointConfig;
  tiers: {
    maxTokensHot: number;
    maxDecisionsWarm: number;
    maxDecisionsCold: number;
    /** Token target of the cold-tier summary. */
    summaryTokens: number;
  };
}

/** ACMS_SPARQL_QUERY_URL, ACMS_SPARQL_UPDATE_URL, ACMS_SPARQL_USER, ACMS_SPARQL_PASSWORD. */
export interface SparqlEndpointConfig {
  queryUrl: string;
  /** Defaults to the query URL (Virtuoso serves both on one URL). */
  updateUrl: string;
  user?: string;
  password?: string;
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
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${name} must be an http or https URL, got "${url.protocol}" URL`);
  if (url.username !== "" || url.password !== "") throw new Error(`${name} must not hold credentials: set ACMS_SPARQL_USER and ACMS_SPARQL_PASSWORD`);
  return url.toString();
}

/** The SPARQL endpoint settings, or undefined when ACMS_SPARQL_QUERY_URL is unset (the embedded graph). */
function sparqlEndpointFrom(env: NodeJS.ProcessEnv): SparqlEndpointConfig | undefined {
  const queryUrl = httpUrlFrom(env, "ACMS_SPARQL_QUERY_URL");
  const updateUrl = httpUrlFrom(env, "ACMS_SPARQL_UPDATE_URL");
  const user = env.ACMS_SPARQL_USER && env.ACMS_SPARQL_USER.length > 0 ? env.ACMS_SPARQL_USER : undefined;
  const password = env.ACMS_SPARQL_PASSWORD && env.ACMS_SPARQL_PASSWORD.length > 0 ? env.ACMS_SPARQL_PASSWORD : undefined;
  if (!queryUrl) {
    if (updateUrl || user || password) throw new Error("ACMS_SPARQL_QUERY_URL must be set when ACMS_SPARQL_UPDATE_URL, ACMS_SPARQL_USER or ACMS_SPARQL_PASSWORD is");
    return undefined;
  }
  if ((user === undefined) !== (password === undefined)) throw new Error("ACMS_SPARQL_USER and ACMS_SPARQL_PASSWORD must be set together");
  return { queryUrl, updateUrl: updateUrl ?? queryUrl, user, password };
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

/**
 * Reads the configuration from environment variables (flags are mapped onto the same names by the CLI).
 * Throws an Error with a one-line message on any bad value.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    host: env.ACMS_HOST && env.ACMS_HOST.length > 0 ? env.ACMS_HOST : "127.0.0.1",
    port: intFrom(env, "ACMS_PORT", 50051, 0, 65535),
    dataDir: resolve(env.ACMS_DATA_DIR && env.ACMS_DATA_DIR.length > 0 ? env.ACMS_DATA_DIR : "./.acms"),
    keysFile: env.ACMS_KEYS_FILE && env.ACMS_KEYS_FILE.length > 0 ? env.ACMS_KEYS_FILE : undefined,
    embeddingDim: intFrom(env, "ACMS_EMBEDDING_DIM", 384, 1, 8192),
    maxResultsCap: intFrom(env, "ACMS_MAX_RESULTS", 1000, 1, 100000),
    maxMessageBytes: intFrom(env, "ACMS_MAX_MESSAGE_BYTES", 16 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    sparqlTimeoutMs: intFrom(env, "ACMS_SPARQL_TIMEOUT_MS", 10000, 10, 600000),
    recentWindowMs: intFrom(env, "ACMS_RECENT_WINDOW_MS", 7 * 24 * 3600 * 1000, 0, 3650 * 24 * 3600 * 1000),
    keywordIndex: keywordIndexFrom(env.ACMS_KEYWORD_INDEX),
    sparqlEndpoint: sparqlEndpointFrom(env),
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
