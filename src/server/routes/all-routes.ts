import type { ConnectRouter } from "@connectrpc/connect";
import type { RouteDeps } from "../composition/server-deps.js";
import { healthRoutes } from "./health-routes.js";
import { reflectionRoutes } from "./reflection-routes.js";
import { registryRoutes } from "./registry-routes.js";
import { scopeRoutes } from "./scope-routes.js";
import { tierRoutes } from "./tier-routes.js";
import { indexRoutes } from "./index-routes.js";
import { textRoutes } from "./text-routes.js";
import { vectorRoutes } from "./vector-routes.js";
import { graphRoutes } from "./graph-routes.js";
import { ragRoutes } from "./rag-routes.js";

/** Services answered without an API key. */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set(["grpc.health.v1.Health"]);

/** Services answered on a valid key alone: reflection, whose vendored protos carry no access option. */
export const AUTHENTICATED_SERVICES: ReadonlySet<string> = new Set([
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** Every service of the contract, each from its own route module. */
export function allRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  return (router) => {
    registryRoutes(deps)(router);
    scopeRoutes(deps)(router);
    tierRoutes(deps)(router);
    indexRoutes(deps)(router);
    textRoutes(deps)(router);
    vectorRoutes(deps)(router);
    graphRoutes(deps)(router);
    ragRoutes(deps)(router);
    healthRoutes(deps.serving)(router);
    reflectionRoutes()(router);
  };
}
