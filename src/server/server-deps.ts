import type { Services } from "../application/services.js";
import type { Backends } from "./backends.js";
import type { Config } from "./config.js";
import type { InternalErrorSink } from "./error-mapping.js";
import type { KeyRing } from "./key-ring.js";
import type { ServingState } from "./serving-state.js";

/** What `createRoutes` and `startServer` need: the config, the key ring and the backends. */
export interface ServerDeps {
  config: Config;
  keys: KeyRing;
  backends: Backends;
  onInternalError?: InternalErrorSink;
  /** Health's source of truth; `startServer` makes one when absent and drains it on close. */
  serving?: ServingState;
}

/**
 * What the route modules get: the server's deps with the application services the composition root
 * built over its backends. Kept apart from server.ts so the route modules and the server do not import
 * each other.
 */
export interface RouteDeps extends ServerDeps {
  services: Services;
  serving: ServingState;
}
