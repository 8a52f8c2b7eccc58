import type { Services } from "../../application/services.js";
import type { Backends } from "./backends.js";
import type { Config } from "./config.js";
import type { InternalErrorSink } from "../transport/error-mapping.js";
import type { KeyRing } from "../../application/access/key-ring.js";
import type { ServingState } from "../observability/serving-state.js";
import type { AuditLog } from "../observability/audit-log.js";
import type { RequestLog } from "../observability/request-log.js";
import type { ServerMetrics } from "../observability/server-metrics.js";
import type { Tracing } from "../observability/tracing.js";

/** What `createRoutes` and `startServer` need: the config, the key ring and the backends. */
export interface ServerDeps {
  config: Config;
  keys: KeyRing;
  backends: Backends;
  onInternalError?: InternalErrorSink;
  /** Health's source of truth; `startServer` makes one when absent and drains it on close. */
  serving?: ServingState;
  /** Where refused calls are recorded; `startServer` opens `config.auditLog` when this is absent. */
  audit?: AuditLog;
  /** Call and internal-error logs; absent: JSON lines on stderr at `config.logLevel`. */
  log?: RequestLog;
  /** Prometheus metrics fed by every call; `startServer` makes them when `config.metricsPort` is set. */
  metrics?: ServerMetrics;
  /** OpenTelemetry tracing of every call and engine call; `startServer` starts it when `config.tracing` is set. */
  tracing?: Tracing;
}

/**
 * What the route modules get: the config, the application services the composition root built over its
 * backends, and health's state. Never the backends: a route translates the wire and calls a service, so
 * every front end reaches the data through the same use cases. Kept apart from server.ts so the route
 * modules and the server do not import each other.
 */
export interface RouteDeps {
  config: Config;
  services: Services;
  serving: ServingState;
}
