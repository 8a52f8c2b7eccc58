import {
  createConnectRouter,
  createContextValues,
  type ConnectRouter,
  type ContextValues,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { createUniversalHandlerClient, type UniversalHandler } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import { narrowingIncludePathsKey } from "../access/context-keys.js";
import { admittedUpstreamKey } from "../quotas/admitted-upstream.js";

/**
 * The call options' context values an MCP tool hands one RPC to narrow its scope to `includePaths` (see
 * `narrowingIncludePathsKey`): only this transport carries them to the server side, so only in-process calls
 * can narrow this way.
 */
export function includePathsValues(includePaths: readonly string[]): ContextValues {
  return createContextValues().set(narrowingIncludePathsKey, [...includePaths]);
}

/**
 * A transport whose calls run through the server's own router, handlers and interceptors, in process: request
 * log, metrics, audit, the access interceptor (key, scope, refs), quotas, then the route. MCP tools call the
 * RPCs over it, so they take the one access path every RPC takes; only the network hop is left out.
 *
 * Unlike Connect's `createRouterTransport`, the server side of a call gets context values of its own: every call
 * is marked as admitted upstream (the MCP endpoint admitted the JSON-RPC request it serves against the
 * principal's quotas, so its RPCs spend no second admission; their cost budgets still apply), and the one
 * value a tool may hand over in its call options, `narrowingIncludePathsKey`, is carried across. Nothing else
 * of the client's values crosses, and no header sets either: a remote client reaches neither.
 */
export function inProcessTransport(routes: (router: ConnectRouter) => void, interceptors: Interceptor[]): Transport {
  const router = createConnectRouter({ interceptors, connect: true });
  routes(router);
  // The client side's values of a call, by its request headers object (the one object both sides are handed).
  const clientValues = new WeakMap<Headers, ContextValues>();
  const remember: Interceptor = (next) => (req) => {
    clientValues.set(req.header, req.contextValues);
    return next(req);
  };
  const handlers = router.handlers.map((h) => {
    const handler: UniversalHandler = Object.assign(
      (req: Parameters<UniversalHandler>[0]) => {
        const values = createContextValues().set(admittedUpstreamKey, true);
        const include = clientValues.get(req.header)?.get(narrowingIncludePathsKey);
        if (include !== undefined) values.set(narrowingIncludePathsKey, include);
        return h({ ...req, contextValues: values });
      },
      {
        protocolNames: h.protocolNames,
        supportedContentType: h.supportedContentType,
        allowedMethods: h.allowedMethods,
        requestPath: h.requestPath,
        service: h.service,
        method: h.method,
      },
    );
    return handler;
  });
  return createTransport({
    httpClient: createUniversalHandlerClient(handlers),
    baseUrl: "https://in-memory",
    useBinaryFormat: true,
    interceptors: [remember],
    acceptCompression: [],
    sendCompression: null,
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    readMaxBytes: Number.MAX_SAFE_INTEGER,
    writeMaxBytes: Number.MAX_SAFE_INTEGER,
  });
}
