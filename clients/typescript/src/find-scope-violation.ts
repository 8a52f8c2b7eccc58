import { ConnectError } from "@connectrpc/connect";
import { ScopeViolationSchema, type ScopeViolation } from "../../../gen/acms/v1/errors_pb.js";

/**
 * The `acms.v1.ScopeViolation` detail of a refused call, or undefined when `err` is not one. The detail names
 * the offending resource ids and projects, which is what an agent needs to narrow its request and retry.
 * Works for every protocol: the Connect error body and the gRPC `grpc-status-details-bin` trailer alike.
 *
 * @example
 * try { await acms.rag.fetchContent({ ukoUris }); }
 * catch (err) { const v = findScopeViolation(err); if (v) console.log(v.resourceIds); else throw err; }
 */
export function findScopeViolation(err: unknown): ScopeViolation | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  return err.findDetails(ScopeViolationSchema)[0];
}
