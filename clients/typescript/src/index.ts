export { createAcmsClient } from "./create-acms-client.js";
export type { AcmsClientOptions, AcmsProtocol } from "./create-acms-client.js";
export type { AcmsClient, AcmsClientBaseOptions } from "./acms-client.js";
export { acmsHeadersInterceptor } from "./acms-headers-interceptor.js";
export { findScopeViolation } from "./find-scope-violation.js";
export { findBadRequest, findFieldViolations } from "./find-bad-request.js";
export { Code, ConnectError } from "@connectrpc/connect";
export type { ScopeViolation } from "../../../gen/acms/v1/errors_pb.js";
export type { BadRequest, BadRequest_FieldViolation } from "../../../gen/google/rpc/error_details_pb.js";
