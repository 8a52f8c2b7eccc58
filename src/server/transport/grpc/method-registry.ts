import type { DescService } from "@bufbuild/protobuf";
import { createServiceImplSpec, type ConnectRouter, type MethodImplSpec, type ServiceImpl } from "@connectrpc/connect";

/** The unary and server-streaming methods the gRPC fast path serves, by request path (`/pkg.Service/Method`). */
export type MethodRegistry = Map<string, MethodImplSpec & { kind: "unary" | "server_streaming" }>;

/**
 * Wraps `routes` so that every service it registers on the Connect router is also recorded in `registry`
 * (the same implementation objects, so both paths run the same handlers). Client- and bidi-streaming
 * methods are left to Connect. The router's own `handlers` list stays visible to the routes (health reads
 * it to name the services it covers).
 */
export function recordingRoutes(
  routes: (router: ConnectRouter) => void,
  registry: Map<string, MethodImplSpec & { kind: "unary" | "server_streaming" }>,
): (router: ConnectRouter) => void {
  return (router) => {
    const recording: ConnectRouter = {
      handlers: router.handlers,
      service(service, impl, options) {
        record(registry, service, impl as ServiceImpl<DescService>);
        router.service(service, impl, options);
        return recording;
      },
      rpc(method, impl, options) {
        router.rpc(method, impl, options);
        return recording;
      },
    };
    routes(recording);
  };
}

function record(
  registry: Map<string, MethodImplSpec & { kind: "unary" | "server_streaming" }>,
  service: DescService,
  impl: ServiceImpl<DescService>,
): void {
  const spec = createServiceImplSpec(service, impl);
  for (const m of Object.values(spec.methods)) {
    if (m.kind === "unary" || m.kind === "server_streaming") registry.set(`/${service.typeName}/${m.method.name}`, m);
  }
}
