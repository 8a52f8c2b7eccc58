/** The server package uses the client package (clients/typescript, `@acms/client`); this keeps the old import path. */
export { createAcmsClient, acmsHeadersInterceptor } from "../../clients/typescript/src/index.js";
export type { AcmsClient, AcmsClientOptions, AcmsProtocol } from "../../clients/typescript/src/index.js";
