import { existsSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { dirname } from "node:path";
import { generateKey, hashKey, KeyRing, parseKeyEntries, readKeysFile, type KeyEntry } from "../../application/access/key-ring.js";
import { RequestLog } from "../observability/request-log.js";
import { createBackends } from "./composition-root.js";
import { isLoopback, loadConfig, type Config } from "./config.js";
import { startServer, type AcmsServer } from "./server.js";

/**
 * A setting the service cannot start with, in one line (the CLI answers it as a usage error). `namesSetting`:
 * the message names the environment variable at fault, so a front end may name its own flag for it too.
 */
export class StartRefusal extends Error {
  constructor(
    message: string,
    readonly namesSetting = true,
  ) {
    super(message);
    this.name = "StartRefusal";
  }
}

/** A service started by `startAcms`. */
export interface StartedAcms {
  server: AcmsServer;
  config: Config;
  /** The admin key generated for this run when no keys were configured. */
  generatedKey?: string;
  /** Which graph engine runs, for the start-up log (e.g. "Oxigraph (embedded)"). */
  graphEngine?: string;
  /** Which embedder runs, for the start-up log; absent: none. */
  embedder?: string;
}

/** Where `startAcms` writes its call and internal-error log lines. */
export interface StartAcmsOptions {
  stderr: { write(chunk: string): unknown };
}

/** The configured keys: from ACMS_KEYS_FILE, or inline JSON in ACMS_KEYS (never both). */
function configuredKeys(config: Config, env: NodeJS.ProcessEnv): KeyEntry[] {
  const inline = env.ACMS_KEYS && env.ACMS_KEYS.trim().length > 0 ? env.ACMS_KEYS : undefined;
  if (config.keysFile && inline) throw new StartRefusal("set ACMS_KEYS_FILE (--keys-file) or ACMS_KEYS, not both", false);
  if (config.keysFile) return readKeysFile(config.keysFile);
  if (!inline) return [];
  let json: unknown;
  try {
    json = JSON.parse(inline);
  } catch (err) {
    throw new StartRefusal(`ACMS_KEYS is not valid JSON: ${(err as Error).message}`, false);
  }
  return parseKeyEntries(json, "ACMS_KEYS");
}

/** A listen failure in one line. */
function describeListenError(err: unknown, config: Config): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const where = `${config.host}:${config.port}`;
  if (code === "EADDRINUSE") return new Error(`cannot listen on ${where}: the port is already in use (set --port or ACMS_PORT)`);
  if (code === "EACCES") return new Error(`cannot listen on ${where}: permission denied`);
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") return new Error(`cannot listen on ${where}: no such local address`);
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Refuses a data directory that cannot be one (itself, or the nearest existing ancestor, is a file) in one
 * line, before anything is created: mkdir would otherwise fail with a raw EEXIST or ENOTDIR.
 */
function checkDataDir(dataDir: string): void {
  let path = dataDir;
  while (!existsSync(path)) {
    const up = dirname(path);
    if (up === path) return;
    path = up;
  }
  if (statSync(path).isDirectory()) return;
  const what = path === dataDir ? "is a file, not a directory" : `cannot be created: ${path} is a file`;
  throw new StartRefusal(`the data directory ACMS_DATA_DIR ${dataDir} ${what}`);
}

/**
 * Fails fast, with the one-line listen error, when the port is taken: checked before the data directory
 * and the backends are created, so a failed start leaves nothing behind. Port 0 is always free.
 */
async function checkPortFree(config: Config): Promise<void> {
  if (config.port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err) => reject(describeListenError(err, config)));
    probe.listen({ host: config.host, port: config.port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * The composition root's one entry: configuration from `env`, keys from ACMS_KEYS_FILE or ACMS_KEYS, the
 * adapters config picks (createBackends), the application services over them and the server (startServer).
 * With no keys it serves loopback only with a generated admin key (returned, for the caller to show once),
 * and refuses any other address: an open server must never run without keys. A bad setting throws
 * StartRefusal; a port that cannot be listened on throws an Error with a one-line message.
 * @example const { server } = await startAcms({ ACMS_PORT: "0", ACMS_DATA_DIR: "/tmp/acms" }, { stderr: process.stderr }); await server.close();
 */
export async function startAcms(env: NodeJS.ProcessEnv, opts: StartAcmsOptions): Promise<StartedAcms> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    throw new StartRefusal((err as Error).message);
  }
  let entries = configuredKeys(config, env);
  let generatedKey: string | undefined;
  if (entries.length === 0) {
    if (!isLoopback(config.host)) {
      throw new StartRefusal(
        `refusing to listen on ${config.host} without API keys: set ACMS_KEYS_FILE (see docs/operating.md, "API keys") or listen on 127.0.0.1`,
        false,
      );
    }
    generatedKey = generateKey();
    entries = [{ name: "admin", key_sha256: hashKey(generatedKey), projects: ["*/*"], write: true }];
  }

  checkDataDir(config.dataDir);
  await checkPortFree(config);
  const createdDataDir = !existsSync(config.dataDir);
  const backends = await createBackends(config, { deferLoads: true });
  let server: AcmsServer;
  try {
    server = await startServer({ config, keys: new KeyRing(entries), backends, log: new RequestLog(config.logLevel, opts.stderr) });
  } catch (err) {
    // Lost a race for the port after the check (startServer has closed the backends): a data directory this
    // run created holds nothing yet, so it goes too.
    if (createdDataDir) rmSync(config.dataDir, { recursive: true, force: true });
    throw describeListenError(err, config);
  }
  return { server, config, generatedKey, graphEngine: backends.graphEngine, embedder: backends.embedder?.description };
}
