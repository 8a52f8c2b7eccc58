import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { leanUnaryTransport } from "./lean-unary-transport.js";
import { WideWindowSessionManager } from "./wide-window-session-manager.js";
import { assembleAcmsClient, type AcmsClient, type AcmsClientBaseOptions } from "./acms-client.js";

/** The wire protocols the server speaks on its one port. */
export type AcmsProtocol = "connect" | "grpc" | "grpc-web";

/** How a Node process reaches an ACMS server and as whom. */
export interface AcmsClientOptions extends AcmsClientBaseOptions {
  /** The wire protocol (default `connect`). */
  protocol?: AcmsProtocol;
  /** HTTP version (default `2`, h2c; `1.1` works for `connect` and `grpc-web` only). */
  httpVersion?: "1.1" | "2";
}

/**
 * Builds typed clients for every ACMS service with the key and scope headers set by an interceptor, over
 * one shared HTTP/2 connection (with a 1 MiB receive window: see WideWindowSessionManager). This is the
 * supported way for TypeScript code in Node to call the service (browsers use `createAcmsWebClient` from
 * `@acms/client/web`).
 *
 * @example
 * const acms = createAcmsClient({ baseUrl: "http://127.0.0.1:50051", apiKey: process.env.ACMS_API_KEY });
 * const { scope } = await acms.scope.resolveScope({ projects: ["local/acms"] });
 * const scoped = acms.withScope(scope!.scopeId);
 * const { results } = await scoped.text.search({ query: "quickstart", maxResults: 5 });
 * acms.close();
 */
export function createAcmsClient(options: AcmsClientOptions): AcmsClient {
  const httpVersion = options.httpVersion ?? "2";
  if (options.protocol === "grpc" && httpVersion === "1.1") {
    throw new Error("the gRPC protocol needs HTTP/2 (use protocol connect or grpc-web over HTTP/1.1)");
  }
  const sessionManager = httpVersion === "2" ? new WideWindowSessionManager(options.baseUrl) : undefined;
  const makeTransport = (interceptors: AcmsClientBaseOptions["interceptors"]): Transport => {
    const common = { baseUrl: options.baseUrl, interceptors, defaultTimeoutMs: options.defaultTimeoutMs };
    switch (options.protocol ?? "connect") {
      case "grpc":
        // Unary calls on the HTTP/2 stream directly (a third of connect's client CPU a call), streams through connect.
        return leanUnaryTransport("grpc", createGrpcTransport({ ...common, sessionManager }), {
          ...common,
          interceptors: interceptors ?? [],
          sessionManager: sessionManager!,
        });
      case "grpc-web":
        return sessionManager
          ? createGrpcWebTransport({ ...common, httpVersion: "2", sessionManager })
          : createGrpcWebTransport({ ...common, httpVersion: "1.1" });
      case "connect":
        // Over HTTP/2, unary calls on the stream directly too (as for gRPC).
        return sessionManager
          ? leanUnaryTransport("connect", createConnectTransport({ ...common, httpVersion: "2", sessionManager }), {
              ...common,
              interceptors: interceptors ?? [],
              sessionManager,
            })
          : createConnectTransport({ ...common, httpVersion: "1.1" });
    }
  };
  return assembleAcmsClient(options, makeTransport, () => sessionManager?.abort());
}
