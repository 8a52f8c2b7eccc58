/** The server package uses the client package (clients/typescript, `@acms/client`); this keeps the old import path. */
export { findScopeViolation, findBadRequest, findFieldViolations } from "../../clients/typescript/src/index.js";
