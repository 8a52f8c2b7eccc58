import { createRouterTransport, type ConnectRouter, type Interceptor, type Transport } from "@connectrpc/connect";

/**
 * A transport whose calls run through the server's own router, handlers and interceptors, in process: request
 * log, metrics, audit, the access interceptor (key, scope, refs), quotas, then the route. MCP tools call the
 * RPCs over it, so they take the one access path every RPC takes; only the network hop is left out.
 */
export function inProcessTransport(routes: (router: ConnectRouter) => void, interceptors: Interceptor[]): Transport {
  return createRouterTransport(routes, { router: { interceptors } });
}
