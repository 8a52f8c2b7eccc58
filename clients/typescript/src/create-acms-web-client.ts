import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { assembleAcmsClient, type AcmsClient, type AcmsClientBaseOptions } from "./acms-client.js";

/** The wire protocols a browser can speak to the server (gRPC proper needs HTTP trailers, which fetch lacks). */
export type AcmsWebProtocol = "connect" | "grpc-web";

/** How a browser page reaches an ACMS server and as whom. */
export interface AcmsWebClientOptions extends AcmsClientBaseOptions {
  /** The wire protocol (default `connect`). */
  protocol?: AcmsWebProtocol;
  /** Binary protobuf instead of JSON on the Connect protocol (default false: JSON, readable in devtools). */
  useBinaryFormat?: boolean;
}

/**
 * Builds typed clients for every ACMS service over the browser's `fetch`, with the key and scope headers
 * set by an interceptor. The server must list the page's origin in `ACMS_CORS_ORIGINS`.
 *
 * @example
 * import { createAcmsWebClient, findScopeViolation } from "@acms/client/web";
 * const acms = createAcmsWebClient({ baseUrl: "https://acms.example.com", apiKey });
 * const { scope } = await acms.scope.resolveScope({ projects: ["local/acms"] });
 * const { results } = await acms.withScope(scope!.scopeId).text.search({ query: "quickstart" });
 */
export function createAcmsWebClient(options: AcmsWebClientOptions): AcmsClient {
  const makeTransport = (interceptors: AcmsClientBaseOptions["interceptors"]): Transport => {
    const common = { baseUrl: options.baseUrl, interceptors, defaultTimeoutMs: options.defaultTimeoutMs };
    return options.protocol === "grpc-web"
      ? createGrpcWebTransport(common)
      : createConnectTransport({ ...common, useBinaryFormat: options.useBinaryFormat });
  };
  return assembleAcmsClient(options, makeTransport, () => undefined);
}
