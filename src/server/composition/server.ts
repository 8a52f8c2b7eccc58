import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { GraphBackendService } from "../../../gen/acms/v1/graph_pb.js";
import { RagService } from "../../../gen/acms/v1/rag_pb.js";
import { TextBackendService } from "../../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../../gen/acms/v1/vector_pb.js";
import { createAccessInterceptor } from "../access/access-interceptor.js";
import { createBodyGate, keyProven } from "../access/early-authentication.js";
import { COMPRESS_MIN_BYTES } from "../transport/compression-policy.js";
import { withConsole } from "../console/console-assets.js";
import { CONSOLE_SCOPES_PATH, createConsoleScopesEndpoint } from "../console/console-scopes-endpoint.js";
import { withCors } from "../transport/cors.js";
import { withOpenApi } from "../transport/openapi-endpoint.js";
import { createGrpcStreamHandler } from "../transport/grpc/grpc-stream-handler.js";
import { recordingRoutes, type MethodRegistry } from "../transport/grpc/method-registry.js";
import { listen, type Listener } from "../transport/listener.js";
import { createQuotaInterceptor } from "../quotas/quota-interceptor.js";
import { QuotaLedger } from "../quotas/quota-ledger.js";
import { createAuditInterceptor } from "../observability/audit-interceptor.js";
import { AuditLog } from "../observability/audit-log.js";
import { createNodeHandler } from "../transport/node-handler.js";
import { createMetricsInterceptor } from "../observability/metrics-interceptor.js";
import { listenMetrics, type MetricsListener } from "../observability/metrics-listener.js";
import { createRequestLogInterceptor } from "../observability/request-log-interceptor.js";
import { RequestLog } from "../observability/request-log.js";
import { ServerMetrics } from "../observability/server-metrics.js";
import { ServingState } from "../observability/serving-state.js";
import { traceBackends } from "../observability/traced-backends.js";
import { Tracing } from "../observability/tracing.js";
import { createTracingInterceptor } from "../observability/tracing-interceptor.js";
import { createServices } from "./composition-root.js";
import type { Services } from "../../application/services.js";
import type { ServerDeps } from "./server-deps.js";

export type { ServerDeps } from "./server-deps.js";
import { allRoutes, AUTHENTICATED_SERVICES, PUBLIC_SERVICES } from "../routes/all-routes.js";
import { indexBinaryRoutes } from "../routes/index-routes.js";
import { inProcessTransport } from "../mcp/in-process-transport.js";
import { withMcp } from "../mcp/mcp-endpoint.js";

/** A running ACMS server. */
export interface AcmsServer {
  readonly port: number;
  readonly url: string;
  /** Where Prometheus scrapes (`http://host:port/metrics`); undefined when ACMS_METRICS_PORT is unset. */
  readonly metricsUrl?: string;
  /** Graceful stop: refuse new calls, finish in-flight ones, close the backends. */
  close(graceMs?: number): Promise<void>;
}

/** The router-wide interceptors and routes, for the real server and for in-memory router transports. */
export function createRoutes(deps: ServerDeps): {
  routes: (router: ConnectRouter) => void;
  /** Routes serving some of `routes`' methods in the binary protocols (createNodeHandler's `binaryRoutes`). */
  binaryRoutes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  /** The per-principal quota ledger the RPCs count against, for the HTTP endpoints to count against too. */
  quotas: QuotaLedger;
  /** The application services the routes call. */
  services: Services;
} {
  const log = deps.log ?? new RequestLog(deps.config.logLevel);
  // Tracing wraps the ports the services call (one span per engine call), never the adapters themselves.
  const services = createServices(deps.config, deps.tracing ? traceBackends(deps.backends, deps.tracing) : deps.backends);
  const access = createAccessInterceptor({
    keys: deps.keys,
    scopes: deps.backends.scopes,
    registry: deps.backends.registry,
    publicServices: PUBLIC_SERVICES,
    authenticatedServices: AUTHENTICATED_SERVICES,
    onInternalError: deps.onInternalError ?? log.internalError,
    hidden: services.eraser.erasing,
  });
  // Outermost first: the log sees the final code, metrics see every refusal already translated by access, the
  // audit log records refusals; quotas come after access: they are kept per principal, which access names.
  const quotas = new QuotaLedger(deps.config.quotas);
  const interceptors: Interceptor[] = [
    ...(deps.tracing ? [createTracingInterceptor(deps.tracing)] : []),
    createRequestLogInterceptor(log),
    ...(deps.metrics ? [createMetricsInterceptor(deps.metrics)] : []),
    ...(deps.audit ? [createAuditInterceptor(deps.audit)] : []),
    access,
    createQuotaInterceptor(deps.config.quotas, undefined, quotas),
  ];
  const routeDeps = { ...deps, services, serving: deps.serving ?? new ServingState() };
  return { routes: allRoutes(routeDeps), binaryRoutes: indexBinaryRoutes(routeDeps), interceptors, quotas, services };
}

/**
 * Starts the server on `config.host:config.port` (port 0 picks a free one), serving gRPC, gRPC-Web and
 * Connect on one port. Unary and server-streaming gRPC calls, and Connect unary calls in protobuf over HTTP/2,
 * take the fast path (createGrpcStreamHandler: the same handlers and interceptors on Node's HTTP/2 streams);
 * everything else goes through Connect's handler.
 * @example const server = await startServer({ config, keys, backends }); await server.close();
 */
export async function startServer(serverDeps: ServerDeps): Promise<AcmsServer> {
  const metricsPort = serverDeps.config.metricsPort;
  const audit = serverDeps.audit ?? (serverDeps.config.auditLog ? AuditLog.open(serverDeps.config.auditLog) : undefined);
  const deps = {
    ...serverDeps,
    serving: serverDeps.serving ?? new ServingState(),
    audit,
    metrics: serverDeps.metrics ?? (metricsPort !== undefined ? new ServerMetrics(serverDeps.backends) : undefined),
    tracing: serverDeps.tracing ?? (serverDeps.config.tracing ? Tracing.start(serverDeps.config.tracing) : undefined),
  };
  if (deps.backends.graphReady) {
    deps.serving.waitFor([GraphBackendService.typeName, RagService.typeName], deps.backends.graphReady, (err) => {
      if (deps.serving.serving)
        process.stderr.write(
          `acms: the graph store could not be loaded (graph calls answer UNAVAILABLE): ${err instanceof Error ? err.message : String(err)}\n`,
        );
    });
  }
  if (deps.backends.vectorReady) {
    deps.serving.waitFor([VectorBackendService.typeName, RagService.typeName], deps.backends.vectorReady, (err) => {
      if (deps.serving.serving)
        process.stderr.write(
          `acms: the vectors could not be loaded (vector search answers UNAVAILABLE): ${err instanceof Error ? err.message : String(err)}\n`,
        );
    });
  }
  if (deps.backends.embedderReady) {
    deps.serving.waitFor([VectorBackendService.typeName], deps.backends.embedderReady, (err) => {
      if (deps.serving.serving)
        process.stderr.write(
          `acms: the embedder is not usable (text searches and uploads without vectors answer UNAVAILABLE): ${err instanceof Error ? err.message : String(err)}\n`,
        );
    });
  }
  if (deps.backends.textReady) {
    deps.serving.waitFor([TextBackendService.typeName, RagService.typeName], deps.backends.textReady, (err) => {
      if (deps.serving.serving)
        process.stderr.write(`acms: the keyword index could not be loaded: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  }
  const { routes, binaryRoutes, interceptors, quotas, services } = createRoutes(deps);
  try {
    await services.eraser.hidePending();
  } catch (err) {
    await deps.backends.close();
    throw err;
  }
  const methods: MethodRegistry = new Map();
  // Keys are checked from the headers before any body is read (the access interceptor still decides).
  const bodyGate = createBodyGate(deps.keys, PUBLIC_SERVICES);
  const { bodyTimeoutMs, minBodyBytesPerSecond } = deps.config.connections;
  const handler = createNodeHandler({
    bodyGate,
    keyProven,
    bodyTimeoutMs,
    minBodyBytesPerSecond,
    routes: recordingRoutes(routes, methods),
    binaryRoutes,
    interceptors,
    readMaxBytes: deps.config.maxMessageBytes,
    jsonReadMaxBytes: deps.config.maxJsonMessageBytes,
    writeMaxBytes: deps.config.maxMessageBytes,
    compressMinBytes: COMPRESS_MIN_BYTES,
  });
  let listener: Listener;
  let metricsListener: MetricsListener | undefined;
  try {
    const grpc = createGrpcStreamHandler({
      methods,
      interceptors,
      maxMessageBytes: deps.config.maxMessageBytes,
      compressMinBytes: COMPRESS_MIN_BYTES,
      bodyGate,
      keyProven,
      bodyTimeoutMs,
      minBodyBytesPerSecond,
    });
    const consoleApi = { [CONSOLE_SCOPES_PATH]: createConsoleScopesEndpoint({ keys: deps.keys, scopes: deps.backends.scopes, quotas }) };
    // MCP tools run as RPCs through the same routes and interceptors, in process (docs/mcp.md).
    const mcp = {
      keys: deps.keys,
      transport: inProcessTransport(routes, interceptors),
      maxBodyBytes: deps.config.maxJsonMessageBytes,
      bodyTimeoutMs,
      minBodyBytesPerSecond,
      quotas,
    };
    listener = await listen(
      withConsole(
        withCors(withMcp(withOpenApi(handler, deps.config.openapiFile), mcp), deps.config.corsOrigins),
        deps.config.consoleDir,
        consoleApi,
      ),
      deps.config.host,
      deps.config.port,
      deps.config.connections,
      grpc,
    );
    if (deps.metrics && metricsPort !== undefined) {
      metricsListener = await listenMetrics(deps.metrics.registry, deps.config.host, metricsPort).catch(async (err: unknown) => {
        await listener.close(0);
        throw err;
      });
    }
  } catch (err) {
    await deps.backends.close();
    await audit?.close();
    if (!serverDeps.tracing) await deps.tracing?.shutdown();
    throw err;
  }
  // Only now, and on the next turn (the caller reports listening first): loading the data held must not
  // delay listening nor weigh on the process until then.
  setImmediate(() => {
    deps.backends.startLoads?.();
    // Erasures a crash interrupted complete on their own, in the background (their data is hidden meanwhile).
    void services.eraser.resumePending().then(
      () =>
        // Then the graphs of resources the registry no longer knows (see ResourceEraser.sweepOrphanGraphs).
        services.eraser.sweepOrphanGraphs().catch((err: unknown) => {
          // A server closed while it ran (its graph with it) has nothing to report.
          if (deps.serving.serving)
            process.stderr.write(
              `acms: graphs left by erased resources could not be swept (retried at the next start): ${err instanceof Error ? err.message : String(err)}\n`,
            );
        }),
      (err: unknown) => {
        process.stderr.write(`acms: pending erasures could not be resumed: ${err instanceof Error ? err.message : String(err)}\n`);
      },
    );
  });
  const hostForUrl = listener.host.includes(":") ? `[${listener.host}]` : listener.host;
  return {
    port: listener.port,
    url: `http://${hostForUrl}:${listener.port}`,
    metricsUrl: metricsListener ? `http://${hostForUrl}:${metricsListener.port}/metrics` : undefined,
    async close(graceMs) {
      deps.serving.startDraining();
      await listener.close(graceMs);
      await metricsListener?.close();
      await deps.backends.close();
      if (!serverDeps.audit) await audit?.close();
      // Last: the spans of the calls drained above are exported before the process may exit.
      if (!serverDeps.tracing) await deps.tracing?.shutdown();
    },
  };
}
