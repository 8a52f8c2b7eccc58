import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";

/**
 * Services of the contract whose behaviour is not built yet: registered with no methods, so every call
 * is authenticated and scope-checked, then answered UNIMPLEMENTED by the router.
 */
export function unimplementedRoutes(): (router: ConnectRouter) => void {
  return (router) => {
    for (const service of [] as DescService[]) {
      router.service(service, {});
    }
  };
}
