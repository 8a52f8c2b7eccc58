/**
 * Domain errors: plain values that say what went wrong without naming a transport.
 * The server translates them into ConnectError codes with protobuf details at its edge
 * (`server/error-mapping.ts`), so domain and adapters never import Connect.
 */

/** One bad request field, as google.rpc.BadRequest.FieldViolation carries it. */
export interface FieldViolation {
  field: string;
  description: string;
}

/** What a ScopeViolation detail carries. */
export interface ScopeViolationInfo {
  resourceIds: string[];
  scopeProjectNames: string[];
  projectNames: string[];
  reason: string;
}

/** Base class so the edge can tell domain errors from bugs. */
export abstract class AcmsError extends Error {
  abstract readonly kind:
    | "invalid_argument"
    | "scope_violation"
    | "permission_denied"
    | "not_found"
    | "already_exists"
    | "failed_precondition"
    | "unauthenticated"
    | "unimplemented"
    | "unavailable"
    | "resource_exhausted"
    | "deadline_exceeded"
    | "internal";
}

/** A precondition on one or more request fields failed. */
export class InvalidArgumentError extends AcmsError {
  readonly kind = "invalid_argument" as const;
  constructor(readonly violations: FieldViolation[]) {
    super(violations.map((v) => `${v.field}: ${v.description}`).join("; "));
  }
  /** Shorthand for a single field. */
  static field(field: string, description: string): InvalidArgumentError {
    return new InvalidArgumentError([{ field, description }]);
  }
}

/** A request named something outside the call's scope (or the key's projects). */
export class ScopeViolationError extends AcmsError {
  readonly kind = "scope_violation" as const;
  constructor(
    message: string,
    readonly info: ScopeViolationInfo,
  ) {
    super(message);
  }
}

/** The caller may not do this (e.g. a read-only key writing). */
export class PermissionDeniedError extends AcmsError {
  readonly kind = "permission_denied" as const;
}

/** The named thing does not exist (or must not be revealed). */
export class NotFoundError extends AcmsError {
  readonly kind = "not_found" as const;
}

/** The named thing exists already. */
export class AlreadyExistsError extends AcmsError {
  readonly kind = "already_exists" as const;
}

/** The call cannot run in the present state (e.g. a missing scope header). */
export class FailedPreconditionError extends AcmsError {
  readonly kind = "failed_precondition" as const;
}

/** No or an unknown API key. */
export class UnauthenticatedError extends AcmsError {
  readonly kind = "unauthenticated" as const;
}

/** A backend is not configured. */
export class UnimplementedError extends AcmsError {
  readonly kind = "unimplemented" as const;
}

/** A backend failed in a way a retry may fix. */
export class UnavailableError extends AcmsError {
  readonly kind = "unavailable" as const;
}

/** A limit was hit (e.g. a query ran past its time budget). */
export class DeadlineExceededError extends AcmsError {
  readonly kind = "deadline_exceeded" as const;
}

/** A budget or size limit refuses the request. */
export class ResourceExhaustedError extends AcmsError {
  readonly kind = "resource_exhausted" as const;

  /**
   * `retryAfterMs`: when a retry may succeed, sent as google.rpc.RetryInfo; undefined sends the default delay
   * (error-mapping's DEFAULT_RETRY_AFTER_MS): every RESOURCE_EXHAUSTED carries RetryInfo (API.md, fair sharing).
   */
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}
