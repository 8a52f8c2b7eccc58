import { ConnectError } from "@connectrpc/connect";
import { ScopeViolationSchema, type ScopeViolation } from "../../gen/acms/v1/errors_pb.js";
import { BadRequestSchema, type BadRequest_FieldViolation } from "../../gen/google/rpc/error_details_pb.js";

/**
 * The `acms.v1.ScopeViolation` detail of a refused call, or undefined when `err` is not one. The detail names
 * the offending resource ids and projects, which is what an agent needs to narrow its request and retry.
 *
 * @example
 * try { await acms.rag.fetchContent({ ukoUris }); }
 * catch (err) { const v = findScopeViolation(err); if (v) console.log(v.resourceIds); else throw err; }
 */
export function findScopeViolation(err: unknown): ScopeViolation | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  return err.findDetails(ScopeViolationSchema)[0];
}

/** The `google.rpc.BadRequest` field violations of an INVALID_ARGUMENT answer (empty when there are none). */
export function findFieldViolations(err: unknown): BadRequest_FieldViolation[] {
  if (!(err instanceof ConnectError)) return [];
  return err.findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations);
}
