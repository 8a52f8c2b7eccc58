import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createAccessInterceptor } from "./access-interceptor.js";
import { createServices } from "./composition-root.js";
import { listen, type Listener } from "./listener.js";
import { ServingState } from "./serving-state.js";
import { allRoutes, AUTHENTICATED_SERVICES, PUBLIC_SERVICES } from "./routes/all-routes.js";
import type { ServerDeps } from "./server-deps.js";

export type { ServerDeps } from "./server-deps.js";

/** A running ACMS server. */
export interface AcmsServer {
  readonly port: number;
  readonly url: string;
  /** Graceful stop: refuse new calls, finish in-flight ones, close the backends. */
  close(graceMs?: number): Promise<void>;
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
  const services = createServices(deps.config, deps.backends);
  const routes = allRoutes({ ...deps, services, serving: deps.serving ?? new ServingState() });
  return { routes, interceptors: [interceptor] };
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
