import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Backends } from "./backends.js";
import { createAccessInterceptor } from "./access-interceptor.js";
import type { Config } from "./config.js";
import type { InternalErrorSink } from "./error-mapping.js";
import type { KeyRing } from "./key-ring.js";
import { listen, type Listener } from "./listener.js";
import { ServingState } from "./serving-state.js";
import { allRoutes, AUTHENTICATED_SERVICES, PUBLIC_SERVICES } from "./routes/all-routes.js";

/** A running ACMS server. */
export interface AcmsServer {
  readonly port: number;
  readonly url: string;
  /** Graceful stop: refuse new calls, finish in-flight ones, close the backends. */
  close(graceMs?: number): Promise<void>;
}

/** What `createRoutes` needs: the config, the key ring and the backends. */
export interface ServerDeps {
  config: Config;
  keys: KeyRing;
  backends: Backends;
  onInternalError?: InternalErrorSink;
  /** Health's source of truth; `startServer` makes one when absent and drains it on close. */
  serving?: ServingState;
}

/** The router-wide interceptors and routes, for the real server and for in-memory router transports. */
export function createRoutes(deps: ServerDeps): { routes: (router: ConnectRouter) => void; interceptors: ReturnType<typeof createAccessInterceptor>[] } {
  const interceptor = createAccessInterceptor({
    keys: deps.keys,
    scopes: deps.backends.scopes,
    registry: deps.backends.registry,
    publicServices: PUBLIC_SERVICES,
    authenticatedServices: AUTHENTICATED_SERVICES,
    onInternalError: deps.onInternalError,
  });
  return { routes: allRoutes(deps), interceptors: [interceptor] };
}

/**
 * Starts the server on `config.host:config.port` (port 0 picks a free one), serving gRPC, gRPC-Web and
 * Connect on one port.
 * @example const server = await startServer({ config, keys, backends }); await server.close();
 */
export async function startServer(serverDeps: ServerDeps): Promise<AcmsServer> {
  const deps = { ...serverDeps, serving: serverDeps.serving ?? new ServingState() };
  const { routes, interceptors } = createRoutes(deps);
  const handler = connectNodeAdapter({
    routes,
    interceptors,
    readMaxBytes: deps.config.maxMessageBytes,
    writeMaxBytes: deps.config.maxMessageBytes,
  });
  let listener: Listener;
  try {
    listener = await listen(handler, deps.config.host, deps.config.port);
  } catch (err) {
    await deps.backends.close();
    throw err;
  }
  const hostForUrl = listener.host.includes(":") ? `[${listener.host}]` : listener.host;
  return {
    port: listener.port,
    url: `http://${hostForUrl}:${listener.port}`,
    async close(graceMs) {
      deps.serving.startDraining();
      await listener.close(graceMs);
      await deps.backends.close();
    },
  };
}
