import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { AuditLog } from "./audit-log.js";
import { principalKey } from "../access/context-keys.js";
import { withMessage } from "../transport/with-message.js";

/**
 * Writes every refused call to the audit log: outermost, so it sees the code the client gets (from access,
 * quotas or the handler, mid-stream too) and the principal access named.
 */
export function createAuditInterceptor(log: AuditLog): Interceptor {
  return (next) => async (req) => {
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const record = (err: unknown): never => {
      const e = ConnectError.from(err);
      log.refused(req.contextValues.get(principalKey)?.name, rpc, e);
      throw err;
    };
    try {
      const res = await next(req);
      if (!res.stream) return res;
      const messages = res.message;
      return withMessage(
        res,
        (async function* audited() {
          try {
            yield* messages;
          } catch (err) {
            record(err);
          }
        })(),
      );
    } catch (err) {
      return record(err);
    }
  };
}
