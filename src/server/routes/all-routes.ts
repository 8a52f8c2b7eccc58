import type { ConnectRouter } from "@connectrpc/connect";
import type { ServerDeps } from "../server.js";
import { registryRoutes } from "./registry-routes.js";
import { scopeRoutes } from "./scope-routes.js";
import { unimplementedRoutes } from "./unimplemented-routes.js";

/** Services answered without an API key. */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set(["grpc.health.v1.Health"]);

/** Every service of the contract, each from its own route module. */
export function allRoutes(deps: ServerDeps): (router: ConnectRouter) => void {
  return (router) => {
    registryRoutes(deps)(router);
    scopeRoutes(deps)(router);
    unimplementedRoutes()(router);
  };
}
