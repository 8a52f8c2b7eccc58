import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../../gen/acms/v1/errors_pb.js";
import { BadRequestSchema, BadRequest_FieldViolationSchema, RetryInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { AcmsError, InvalidArgumentError, ResourceExhaustedError, ScopeViolationError } from "../../domain/errors.js";

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

/**
 * Bounds on what one error carries on the wire. gRPC sends the message and details in HTTP/2 trailers,
 * which peers cap (typically 8 to 64 KiB): a request with 100k bad entries must still get a readable
 * INVALID_ARGUMENT, not a stream reset. The first entries are kept and the rest counted.
 */
export const WIRE_ERROR_LIMITS = { messageChars: 2048, violations: 50, listEntries: 100 } as const;

function clipMessage(message: string): string {
  const max = WIRE_ERROR_LIMITS.messageChars;
  if (message.length <= max) return message;
  const tail = ` … (${message.length - max + 1} more characters)`;
  return message.slice(0, max - tail.length) + tail;
}

function clipList(values: readonly string[]): string[] {
  return values.slice(0, WIRE_ERROR_LIMITS.listEntries);
}

/** The message of an INVALID_ARGUMENT: as many violations as fit, then how many more there are. */
function violationsMessage(violations: readonly { field: string; description: string }[]): string {
  const budget = WIRE_ERROR_LIMITS.messageChars - 64;
  const shown: string[] = [];
  let length = 0;
  for (const v of violations.slice(0, WIRE_ERROR_LIMITS.violations)) {
    const part = `${v.field}: ${v.description}`;
    if (shown.length > 0 && length + part.length + 2 > budget) break;
    shown.push(part);
    length += part.length + 2;
  }
  const rest = violations.length - shown.length;
  return clipMessage(shown.join("; ") + (rest > 0 ? `; and ${rest} more field violations` : ""));
}

/**
 * The RetryInfo delay of a RESOURCE_EXHAUSTED raised without one of its own (a per-call budget such as the
 * graph engine's answer size): the same second the quota interceptor gives a call over its cost budget.
 */
export const DEFAULT_RETRY_AFTER_MS = 1000;

/** Called with every error that is not a domain error (and the request id of its call), so bugs are logged once, server-side. */
export type InternalErrorSink = (err: unknown, requestId?: string) => void;

const defaultSink: InternalErrorSink = (err) => {
  process.stderr.write(`acms: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
};

/** Node's errors for a stream or connection the peer reset or closed under a call. */
const CLIENT_GONE_CODES: ReadonlySet<string> = new Set([
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_HTTP2_STREAM_ERROR",
  "ERR_HTTP2_STREAM_CANCEL",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ECONNRESET",
  "EPIPE",
]);

/** Whether `err` (or what it wraps) says the client went away: a cancel, not a server failure to log. */
function isClientGone(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    if (e instanceof ConnectError && (e.code === Code.Canceled || e.code === Code.Aborted)) return true;
    // The bare AbortError of a handler's signal, aborted by Connect when the request stream closes (the
    // server's own aborts carry a ConnectError): a call that passed its signal's reason on (the embedder).
    if (typeof e === "object" && (e as { name?: unknown }).name === "AbortError") return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && CLIENT_GONE_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Translates anything thrown by a handler into a ConnectError with a real code and protobuf details.
 * Domain errors keep their message; anything else becomes INTERNAL with a generic message, so no stack
 * trace or driver message ever reaches the wire.
 */
export function toConnectError(err: unknown, sink: InternalErrorSink = defaultSink): ConnectError {
  if (isClientGone(err)) return new ConnectError("the client cancelled the call", Code.Canceled);
  if (err instanceof ConnectError && err.code === Code.Internal && err.rawMessage.startsWith("parse binary: ")) {
    // A streamed request message that does not decode (connect-es calls it INTERNAL): the client's fault.
    return new ConnectError(`a request message is not valid protobuf (${err.rawMessage.slice(14)})`, Code.InvalidArgument);
  }
  if (err instanceof ConnectError && err.code === Code.Internal && err.rawMessage === "decompression failed") {
    // A streamed request message that does not decompress (connect-node calls some zlib errors INTERNAL): the client's fault.
    return new ConnectError("a request message does not decompress in the encoding it names", Code.InvalidArgument);
  }
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
      const info = err.info;
      return new ConnectError(clipMessage(err.message), code, undefined, [
        {
          desc: ScopeViolationSchema,
          value: create(ScopeViolationSchema, {
            resourceIds: clipList(info.resourceIds),
            scopeProjectNames: clipList(info.scopeProjectNames),
            projectNames: clipList(info.projectNames),
            reason: clipMessage(info.reason),
          }),
        },
      ]);
    }
    if (err instanceof InvalidArgumentError) {
      const violations = err.violations.slice(0, WIRE_ERROR_LIMITS.violations);
      return new ConnectError(violationsMessage(err.violations), code, undefined, [
        {
          desc: BadRequestSchema,
          value: create(BadRequestSchema, {
            fieldViolations: violations.map((v) => create(BadRequest_FieldViolationSchema, { field: v.field, description: v.description })),
          }),
        },
      ]);
    }
    if (err instanceof ResourceExhaustedError) {
      // API.md: over a quota or a per-call cost budget is RESOURCE_EXHAUSTED with RetryInfo, always.
      const retryAfterMs = err.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
      return new ConnectError(clipMessage(err.message), code, undefined, [
        { desc: RetryInfoSchema, value: create(RetryInfoSchema, { retryDelay: durationFromMs(Math.max(1, retryAfterMs)) }) },
      ]);
    }
    return new ConnectError(clipMessage(err.message), code);
  }
  sink(err);
  return new ConnectError("internal error", Code.Internal);
}
