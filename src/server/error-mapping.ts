import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { BadRequestSchema, BadRequest_FieldViolationSchema } from "../../gen/google/rpc/error_details_pb.js";
import { AcmsError, InvalidArgumentError, ScopeViolationError } from "../domain/errors.js";

const CODES: Record<AcmsError["kind"], Code> = {
  invalid_argument: Code.InvalidArgument,
  scope_violation: Code.PermissionDenied,
  permission_denied: Code.PermissionDenied,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  unauthenticated: Code.Unauthenticated,
  unimplemented: Code.Unimplemented,
  unavailable: Code.Unavailable,
  resource_exhausted: Code.ResourceExhausted,
  deadline_exceeded: Code.DeadlineExceeded,
  internal: Code.Internal,
};

/** Called with every error that is not a domain error, so bugs are logged once, server-side. */
export type InternalErrorSink = (err: unknown) => void;

const defaultSink: InternalErrorSink = (err) => {
  process.stderr.write(`acms: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
};

/**
 * Translates anything thrown by a handler into a ConnectError with a real code and protobuf details.
 * Domain errors keep their message; anything else becomes INTERNAL with a generic message, so no stack
 * trace or driver message ever reaches the wire.
 */
export function toConnectError(err: unknown, sink: InternalErrorSink = defaultSink): ConnectError {
  if (err instanceof ConnectError) {
    if (err.code === Code.Internal || err.code === Code.Unknown) {
      // Connect wraps plain errors as INTERNAL/UNKNOWN keeping their message: hide it.
      if (err.cause !== undefined && !(err.cause instanceof AcmsError)) {
        sink(err.cause);
        return new ConnectError("internal error", Code.Internal);
      }
    }
    return err;
  }
  if (err instanceof AcmsError) {
    const code = CODES[err.kind];
    if (err instanceof ScopeViolationError) {
      return new ConnectError(err.message, code, undefined, [
        { desc: ScopeViolationSchema, value: create(ScopeViolationSchema, err.info) },
      ]);
    }
    if (err instanceof InvalidArgumentError) {
      const violations = err.violations;
      return new ConnectError(err.message, code, undefined, [
        {
          desc: BadRequestSchema,
          value: create(BadRequestSchema, {
            fieldViolations: violations.map((v) =>
              create(BadRequest_FieldViolationSchema, { field: v.field, description: v.description }),
            ),
          }),
        },
      ]);
    }
    return new ConnectError(err.message, code);
  }
  sink(err);
  return new ConnectError("internal error", Code.Internal);
}
