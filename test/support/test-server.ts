import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { loadConfig, type Config } from "../../src/server/composition/config.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { generateKey, hashKey, KeyRing, type KeyEntry } from "../../src/application/access/key-ring.js";
import { startServer, type AcmsServer } from "../../src/server/composition/server.js";
import type { RequestLog } from "../../src/server/observability/request-log.js";
import { quietLog } from "./quiet-log.js";
import { behindOneAddress } from "./replicated-server.js";
import { engineEnv as testEngineEnv, testReplicas } from "./test-engine.js";

/** A principal for tests: its key is generated and kept in clear so tests can call with it. */
export interface TestPrincipal {
  name: string;
  projects: string[];
  write: boolean;
}

/** The default principals: an admin over everything, a writer and a reader of `local/*`, a writer of `other/*`. */
export const DEFAULT_PRINCIPALS: TestPrincipal[] = [
  { name: "admin", projects: ["*/*"], write: true },
  { name: "writer", projects: ["local/*"], write: true },
  { name: "reader", projects: ["local/*"], write: false },
  { name: "other", projects: ["other/*"], write: true },
];

/** A real server on port 0 with a fresh data directory, and helpers to make clients of it. */
export interface TestServer {
  server: AcmsServer;
  config: Config;
  dataDir: string;
  /** Clear-text API keys by principal name. */
  keys: Record<string, string>;
  /** The key entries (hashed), e.g. to restart with the same keys. */
  keyEntries: KeyEntry[];
  /** A Connect-protocol client of `service` calling as `principal`, with the `acms-scope` header when given. */
  client<S extends DescService>(service: S, principal?: string, scopeId?: string, protocol?: "connect" | "grpc"): Client<S>;
  /** Stops the server (keeping the data directory unless `removeData`). */
  close(removeData?: boolean): Promise<void>;
}

/**
 * Environment every test server of this test file starts with, under the test's own `env`: an engine
 * helper (e.g. `graphOnVirtuoso()`) points it at an external engine, so the same tests run on that engine.
 */
export const engineEnv: Record<string, string> = {};

/** Headers for a call as `key`, in scope `scopeId`. */
export function authInterceptor(key: string | undefined, scopeId?: string): Interceptor {
  return (next) => async (req) => {
    if (key !== undefined) req.header.set("authorization", `Bearer ${key}`);
    if (scopeId !== undefined) req.header.set("acms-scope", scopeId);
    return next(req);
  };
}

/**
 * Starts the real server (composition root, SQLite under a temp dir, or a fresh PostgreSQL database when
 * the run's engine is PostgreSQL: see test-engine.ts) on 127.0.0.1:0; on the "postgres-replicas" engine,
 * two servers on one fresh database behind a round-robin proxy, which `server.url` and `server.port` name.
 * @example const t = await startTestServer(); const reg = t.client(RegistryService, "admin"); ... await t.close(true);
 */
export async function startTestServer(
  opts: {
    env?: Record<string, string>;
    dataDir?: string;
    keyEntries?: KeyEntry[];
    keys?: Record<string, string>;
    principals?: TestPrincipal[];
    /** Receives every internal error (default: ignored). */
    onInternalError?: (err: unknown) => void;
    /** The call log; absent: one that writes nowhere. */
    log?: RequestLog;
  } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "acms-test-"));
  let keys: Record<string, string> = opts.keys ?? {};
  let keyEntries = opts.keyEntries;
  if (!keyEntries) {
    keys = {};
    keyEntries = (opts.principals ?? DEFAULT_PRINCIPALS).map((p) => {
      const key = generateKey();
      keys[p.name] = key;
      return { name: p.name, key_sha256: hashKey(key), projects: p.projects, write: p.write };
    });
  }
  const env = { ACMS_HOST: "127.0.0.1", ACMS_PORT: "0", ...(await testEngineEnv(dataDir)), ...engineEnv, ...opts.env };
  const config = loadConfig({ ...env, ACMS_DATA_DIR: dataDir });
  // On the "postgres-replicas" engine the test server is two servers on one database behind one address
  // (replicated-server.ts), each with its own data directory and caches, as two processes would have.
  const replicaDirs = Array.from({ length: testReplicas() - 1 }, (_, i) => join(dataDir, `replica-${i + 2}`));
  const servers: AcmsServer[] = [];
  try {
    for (const c of [config, ...replicaDirs.map((dir) => loadConfig({ ...env, ACMS_DATA_DIR: dir }))]) {
      const backends = await createBackends(c);
      // The embedded graph store loads in the background (health says when): tests start from a loaded one.
      await backends.graphReady;
      servers.push(
        await startServer({
          config: c,
          keys: new KeyRing(keyEntries),
          backends,
          onInternalError: opts.onInternalError ?? (() => undefined),
          log: opts.log ?? quietLog(),
        }),
      );
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.close(0)));
    throw err;
  }
  const server = servers.length === 1 ? servers[0] : await behindOneAddress(servers);
  const sessions: Http2SessionManager[] = [];
  const transports = new Map<string, Transport>();
  function transportFor(protocol: "connect" | "grpc", key: string | undefined, scopeId: string | undefined): Transport {
    const id = `${protocol}|${key}|${scopeId}`;
    let t = transports.get(id);
    if (!t) {
      const sessionManager = new Http2SessionManager(server.url);
      sessions.push(sessionManager);
      const base = { baseUrl: server.url, httpVersion: "2" as const, sessionManager, interceptors: [authInterceptor(key, scopeId)] };
      t = protocol === "grpc" ? createGrpcTransport(base) : createConnectTransport(base);
      transports.set(id, t);
    }
    return t;
  }
  return {
    server,
    config,
    dataDir,
    keys,
    keyEntries,
    client(service, principal, scopeId, protocol = "connect") {
      return createClient(service, transportFor(protocol, principal === undefined ? undefined : (keys[principal] ?? principal), scopeId));
    },
    async close(removeData = false) {
      for (const s of sessions) s.abort();
      await server.close(2000);
      if (removeData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
