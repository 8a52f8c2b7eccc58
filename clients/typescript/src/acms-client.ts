import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { ContextTierService } from "../../../gen/acms/v1/tiers_pb.js";
import { GraphBackendService } from "../../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../../gen/acms/v1/index_pb.js";
import { RagService } from "../../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../../gen/acms/v1/vector_pb.js";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { acmsHeadersInterceptor } from "./acms-headers-interceptor.js";

/** What every ACMS client needs to know, whichever runtime and transport it uses. */
export interface AcmsClientBaseOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:50051`. */
  baseUrl: string;
  /** The API key sent as `authorization: Bearer <key>`; leave it out for health checks only. */
  apiKey?: string;
  /** The scope sent as `acms-scope` on every call (search, graph, RAG, tier and scope-validation RPCs need one). */
  scopeId?: string;
  /** Extra interceptors, run after the one that sets the headers. */
  interceptors?: Interceptor[];
  /** A default timeout for every call, in milliseconds. */
  defaultTimeoutMs?: number;
}

/** Typed clients of every ACMS service, all sending the same key and scope. */
export interface AcmsClient {
  registry: Client<typeof RegistryService>;
  index: Client<typeof IndexService>;
  scope: Client<typeof ScopeService>;
  text: Client<typeof TextBackendService>;
  vector: Client<typeof VectorBackendService>;
  graph: Client<typeof GraphBackendService>;
  rag: Client<typeof RagService>;
  tiers: Client<typeof ContextTierService>;
  health: Client<typeof Health>;
  /** The scope these clients send, if any. */
  readonly scopeId: string | undefined;
  /**
   * The same clients over the same connection, sending `scopeId` instead: resolve a scope once with
   * `scope.resolveScope`, then search through `withScope(scope.scopeId)`.
   */
  withScope(scopeId: string | undefined): AcmsClient;
  /** Closes the connection where there is one to close (Node's HTTP/2); later calls reconnect. */
  close(): void;
}

/**
 * Assembles an {@link AcmsClient} from a transport factory, so the Node and the browser clients differ only
 * in how they make a transport. `makeTransport` gets the header interceptor first, then the caller's.
 */
export function assembleAcmsClient(
  options: AcmsClientBaseOptions,
  makeTransport: (interceptors: Interceptor[]) => Transport,
  close: () => void,
): AcmsClient {
  const build = (scopeId: string | undefined): AcmsClient => {
    const transport = makeTransport([acmsHeadersInterceptor(options.apiKey, scopeId), ...(options.interceptors ?? [])]);
    return {
      registry: createClient(RegistryService, transport),
      index: createClient(IndexService, transport),
      scope: createClient(ScopeService, transport),
      text: createClient(TextBackendService, transport),
      vector: createClient(VectorBackendService, transport),
      graph: createClient(GraphBackendService, transport),
      rag: createClient(RagService, transport),
      tiers: createClient(ContextTierService, transport),
      health: createClient(Health, transport),
      scopeId,
      withScope: (next) => build(next),
      close,
    };
  };
  return build(options.scopeId);
}
