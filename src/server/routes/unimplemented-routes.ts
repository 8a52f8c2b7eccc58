import type { ConnectRouter } from "@connectrpc/connect";
import { ContextTierService } from "../../../gen/acms/v1/tiers_pb.js";
import { GraphBackendService } from "../../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../../gen/acms/v1/index_pb.js";
import { RagService } from "../../../gen/acms/v1/rag_pb.js";
import { TextBackendService } from "../../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../../gen/acms/v1/vector_pb.js";

/**
 * Services of the contract whose behaviour is not built yet: registered with no methods, so every call
 * is authenticated and scope-checked, then answered UNIMPLEMENTED by the router.
 */
export function unimplementedRoutes(): (router: ConnectRouter) => void {
  return (router) => {
    for (const service of [IndexService, TextBackendService, VectorBackendService, GraphBackendService, RagService, ContextTierService]) {
      router.service(service, {});
    }
  };
}
