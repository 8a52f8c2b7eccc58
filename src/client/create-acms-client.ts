import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { ContextTierService } from "../../gen/acms/v1/tiers_pb.js";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";

/** The wire protocols the server speaks on its one port. */
export type AcmsProtocol = "connect" | "grpc" | "grpc-web";

/** How to reach an ACMS server and as whom. */
export interface AcmsClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:50051`. */
  baseUrl: string;
  /** The API key sent as `authorization: Bearer <key>`; leave it out for health checks only. */
  apiKey?: string;
  /** The scope sent as `acms-scope` on every call (search, graph, RAG, tier and scope-validation RPCs need one). */
  scopeId?: string;
  /** The wire protocol (default `connect`). */
  protocol?: AcmsProtocol;
  /** HTTP version (default `2`, h2c; `1.1` works for `connect` and `grpc-web` only). */
  httpVersion?: "1.1" | "2";
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
  /** Closes the HTTP/2 connection (needed for a process to exit promptly); later calls reconnect. */
  close(): void;
}

/** An interceptor that sets the `authorization` and `acms-scope` headers the server reads. */
export function acmsHeadersInterceptor(apiKey: string | undefined, scopeId: string | undefined): Interceptor {
  return (next) => async (req) => {
    if (apiKey !== undefined && apiKey !== "") req.header.set("authorization", `Bearer ${apiKey}`);
    if (scopeId !== undefined && scopeId !== "") req.header.set("acms-scope", scopeId);
    return next(req);
  };
}

function makeTransport(
  options: AcmsClientOptions,
  scopeId: string | undefined,
  sessionManager: Http2SessionManager | undefined,
): Transport {
  const httpVersion = options.httpVersion ?? "2";
  const interceptors = [acmsHeadersInterceptor(options.apiKey, scopeId), ...(options.interceptors ?? [])];
  const common = { baseUrl: options.baseUrl, interceptors, defaultTimeoutMs: options.defaultTimeoutMs };
  switch (options.protocol ?? "connect") {
    case "grpc":
      return createGrpcTransport({ ...common, sessionManager });
    case "grpc-web":
      return httpVersion === "2"
        ? createGrpcWebTransport({ ...common, httpVersion, sessionManager })
        : createGrpcWebTransport({ ...common, httpVersion });
    case "connect":
      return httpVersion === "2"
        ? createConnectTransport({ ...common, httpVersion, sessionManager })
        : createConnectTransport({ ...common, httpVersion });
  }
}

/**
 * Builds typed clients for every ACMS service with the key and scope headers set by an interceptor, over
 * one shared HTTP/2 connection. This is the supported way for TypeScript code to call the service.
 *
 * @example
 * const acms = createAcmsClient({ baseUrl: "http://127.0.0.1:50051", apiKey: process.env.ACMS_API_KEY });
 * const { scope } = await acms.scope.resolveScope({ projects: ["local/acms"] });
 * const scoped = acms.withScope(scope!.scopeId);
 * const { results } = await scoped.text.search({ query: "quickstart", maxResults: 5 });
 * acms.close();
 */
export function createAcmsClient(options: AcmsClientOptions): AcmsClient {
  if (options.protocol === "grpc" && options.httpVersion === "1.1") {
    throw new Error("the gRPC protocol needs HTTP/2 (use protocol connect or grpc-web over HTTP/1.1)");
  }
  const sessionManager = (options.httpVersion ?? "2") === "2" ? new Http2SessionManager(options.baseUrl) : undefined;
  const build = (scopeId: string | undefined): AcmsClient => {
    const transport = makeTransport(options, scopeId, sessionManager);
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
      close: () => sessionManager?.abort(),
    };
  };
  return build(options.scopeId);
}
