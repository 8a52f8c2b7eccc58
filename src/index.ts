export { createAcmsClient, acmsHeadersInterceptor } from "./client/create-acms-client.js";
export type { AcmsClient, AcmsClientOptions, AcmsProtocol } from "./client/create-acms-client.js";
export { findScopeViolation, findFieldViolations } from "./client/find-scope-violation.js";
