import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import type { InvalidArgumentError } from "../domain/errors.js";

/** A precondition a tool checks itself (before any RPC), as the RPCs answer one: INVALID_ARGUMENT with a BadRequest. */
export function invalidArgument(err: InvalidArgumentError): ConnectError {
  const detail = create(BadRequestSchema, {
    fieldViolations: err.violations.map((v) => ({ field: v.field, description: v.description })),
  });
  return new ConnectError(err.message, Code.InvalidArgument, undefined, [{ desc: BadRequestSchema, value: detail }]);
}
