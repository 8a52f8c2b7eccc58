import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import { createHttp1ConnectTransport } from "./http1-connect-transport.js";
import { acmsHeadersInterceptor } from "../../clients/typescript/src/acms-headers-interceptor.js";

/** Makes a typed client for one service; every client it makes shares one transport. */
export type ServiceConnector = <S extends DescService>(service: S) => Client<S>;

/**
 * The lean client of a one-call command (`acms search text`): the Connect protocol over HTTP/1.1 to `url`
 * (`createHttp1ConnectTransport`: node:http only) with the key and scope headers, for only the services the
 * command names. Unlike `createAcmsClient` it loads neither the descriptors of every ACMS service nor
 * node:http2, https, zlib and the other transports, which were most of such a command's time after Node's
 * own start. Nothing needs closing: the idle keep-alive sockets of Node's global agent do not hold the
 * process open.
 */
export function serviceConnector(url: string, apiKey: string, scopeId: string | undefined): ServiceConnector {
  const transport = createHttp1ConnectTransport({ baseUrl: url, interceptors: [acmsHeadersInterceptor(apiKey, scopeId)] });
  return (service) => createClient(service, transport);
}
