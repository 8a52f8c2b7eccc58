import type { Config } from "../server/composition/config.js";
import type { AcmsServer } from "../server/composition/server.js";
import { StartRefusal, startAcms } from "../server/composition/start-acms.js";
import { formatCliError } from "./cli-error.js";
import { CliUsageError } from "./cli-usage-error.js";
import { processIo, type CliIo } from "./cli-io.js";

/** The `serve` flags; each one overrides the environment variable of the same meaning. */
export interface ServeFlags {
  /** ACMS_HOST */
  host?: string;
  /** ACMS_PORT */
  port?: string;
  /** ACMS_DATA_DIR */
  dataDir?: string;
  /** ACMS_KEYS_FILE */
  keysFile?: string;
  /** ACMS_EMBEDDING_DIM */
  embeddingDim?: string;
  /** ACMS_SPARQL_QUERY_URL (the password stays in ACMS_SPARQL_PASSWORD: a flag would show in `ps`) */
  sparqlQueryUrl?: string;
  /** ACMS_SPARQL_UPDATE_URL */
  sparqlUpdateUrl?: string;
  /** ACMS_SPARQL_USER */
  sparqlUser?: string;
  /** ACMS_METRICS_PORT */
  metricsPort?: string;
  /** ACMS_POSTGRES_URL */
  postgresUrl?: string;
  /** ACMS_DUCKDB_PATH */
  duckdbPath?: string;
}

/** What `runServe` needs besides the flags. */
export interface ServeOptions extends ServeFlags {
  /** Environment, output and exit status; the real process by default. */
  io?: CliIo;
  /** Stop gracefully on SIGTERM and SIGINT, then exit the process (true for the CLI, false in tests). */
  handleSignals?: boolean;
  /** How long in-flight calls may take to finish once a shutdown starts. */
  graceMs?: number;
}

/** A server started by `runServe`. */
export interface RunningServe {
  server: AcmsServer;
  config: Config;
  /** The admin key generated for this run when no keys were configured. */
  generatedKey?: string;
  /** Graceful stop: health turns NOT_SERVING, new calls are refused, in-flight calls finish. */
  stop(): Promise<void>;
}

const DEFAULT_GRACE_MS = 10_000;

/** The flags mapped onto the environment variable names `loadConfig` reads, so both paths validate alike. */
function envWithFlags(env: NodeJS.ProcessEnv, flags: ServeFlags): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined) out[name] = value;
  };
  set("ACMS_HOST", flags.host);
  set("ACMS_PORT", flags.port);
  set("ACMS_DATA_DIR", flags.dataDir);
  set("ACMS_KEYS_FILE", flags.keysFile);
  set("ACMS_EMBEDDING_DIM", flags.embeddingDim);
  set("ACMS_SPARQL_QUERY_URL", flags.sparqlQueryUrl);
  set("ACMS_SPARQL_UPDATE_URL", flags.sparqlUpdateUrl);
  set("ACMS_SPARQL_USER", flags.sparqlUser);
  set("ACMS_METRICS_PORT", flags.metricsPort);
  set("ACMS_POSTGRES_URL", flags.postgresUrl);
  set("ACMS_DUCKDB_PATH", flags.duckdbPath);
  return out;
}

const FLAG_OF: Record<string, keyof ServeFlags> = {
  ACMS_HOST: "host",
  ACMS_PORT: "port",
  ACMS_DATA_DIR: "dataDir",
  ACMS_KEYS_FILE: "keysFile",
  ACMS_EMBEDDING_DIM: "embeddingDim",
  ACMS_SPARQL_QUERY_URL: "sparqlQueryUrl",
  ACMS_SPARQL_UPDATE_URL: "sparqlUpdateUrl",
  ACMS_SPARQL_USER: "sparqlUser",
  ACMS_METRICS_PORT: "metricsPort",
  ACMS_POSTGRES_URL: "postgresUrl",
  ACMS_DUCKDB_PATH: "duckdbPath",
};

/** A config error that names an environment variable also names the flag, when the flag set the value. */
function namingFlags(message: string, flags: ServeFlags): string {
  return message.replace(/\b(ACMS_[A-Z_]+)\b/, (name: string) => {
    const flag = FLAG_OF[name];
    if (!flag || flags[flag] === undefined) return name;
    return `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} (${name})`;
  });
}

/**
 * `acms serve`: the flags over the environment, handed to the composition root (startAcms), then the
 * start-up lines (a generated admin key printed once) and the signal handlers. Throws an Error with a
 * one-line message on any bad setting (a CliUsageError naming the flag when a flag set it).
 * @example const running = await runServe({ port: "0", dataDir: "/tmp/acms", handleSignals: false }); await running.stop();
 */
export async function runServe(options: ServeOptions = {}): Promise<RunningServe> {
  const io = options.io ?? processIo();
  let started;
  try {
    started = await startAcms(envWithFlags(io.env, options), { stderr: io.stderr });
  } catch (err) {
    if (err instanceof StartRefusal) throw new CliUsageError(err.namesSetting ? namingFlags(err.message, options) : err.message);
    throw err;
  }
  const { server, config, generatedKey, graphEngine, embedder } = started;

  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= server.close(options.graceMs ?? DEFAULT_GRACE_MS));
  // Before the "listening" line: whoever waits for it may signal at once (the process could be descheduled
  // between that write and the handlers, and a SIGINT then killed it instead of draining it).
  if (options.handleSignals ?? true) installSignalHandlers(io, stop);
  const out = (line: string) => io.stdout.write(`${line}\n`);
  if (generatedKey) {
    out("acms: no API keys configured (ACMS_KEYS_FILE or ACMS_KEYS), so this run serves loopback only");
    out('acms: with a one-time admin key (principal "admin", every project, write). It changes on every start:');
    out("");
    out(`    ${generatedKey}`);
    out("");
    out(`acms: send it as the header   authorization: Bearer ${generatedKey}`);
    out(
      `acms: e.g.  npx buf curl --protocol grpc --http2-prior-knowledge --reflect-header '*' -H "authorization: Bearer ${generatedKey}" --list-services ${server.url}`,
    );
  }
  if (graphEngine) out(`acms: graph engine: ${graphEngine}`);
  if (embedder) out(`acms: embedder: ${embedder}`);
  out(`acms: listening on ${server.url} (gRPC, gRPC-Web and Connect; h2c and HTTP/1.1), data in ${config.dataDir}`);
  if (server.metricsUrl) out(`acms: Prometheus metrics at ${server.metricsUrl}`);

  return { server, config, generatedKey, stop };
}

/** First SIGTERM/SIGINT: drain and exit 0. A second one: exit at once with status 1. */
function installSignalHandlers(io: CliIo, stop: () => Promise<void>): void {
  let received = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) {
      io.stderr.write(`acms: ${signal} again, stopping now\n`);
      process.exit(1);
    }
    received = true;
    io.stdout.write(`acms: ${signal} received: refusing new calls, letting in-flight calls finish\n`);
    stop().then(
      () => {
        io.stdout.write("acms: stopped\n");
        process.exit(0);
      },
      (err: unknown) => {
        io.stderr.write(`${formatCliError(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
