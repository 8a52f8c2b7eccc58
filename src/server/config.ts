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
  /**
   * ACMS_POSTGRES_URL: when set, registry, scopes, documents, BM25, vectors and the tier catalogue live in
   * this PostgreSQL database (see src/adapters/postgres/); the graph and cold files stay under dataDir.
   */
  postgresUrl?: string;
  /** Keyword index: "native" (the store's, e.g. FTS5) or "memory" (the in-memory BM25 fallback); ACMS_KEYWORD_INDEX. */
  keywordIndex: "native" | "memory";
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

function postgresUrlFrom(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^postgres(ql)?:\/\/[^\s]+$/.test(raw.trim())) throw new Error("ACMS_POSTGRES_URL must be a postgres://user:pass@host:port/db URL");
  return raw.trim();
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
    postgresUrl: postgresUrlFrom(env.ACMS_POSTGRES_URL),
    keywordIndex: keywordIndexFrom(env.ACMS_KEYWORD_INDEX),
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
