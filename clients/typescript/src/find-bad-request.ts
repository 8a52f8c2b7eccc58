import { ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, type BadRequest, type BadRequest_FieldViolation } from "../../../gen/google/rpc/error_details_pb.js";

/**
 * The `google.rpc.BadRequest` detail of an INVALID_ARGUMENT answer, or undefined when `err` carries none:
 * its field violations name the request fields to fix.
 *
 * @example
 * catch (err) { for (const v of findBadRequest(err)?.fieldViolations ?? []) console.log(v.field, v.description); }
 */
export function findBadRequest(err: unknown): BadRequest | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  return err.findDetails(BadRequestSchema)[0];
}

/** The field violations of every `google.rpc.BadRequest` detail of `err` (empty when there are none). */
export function findFieldViolations(err: unknown): BadRequest_FieldViolation[] {
  if (!(err instanceof ConnectError)) return [];
  return err.findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations);
}
