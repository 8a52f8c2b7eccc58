import { RequestLog } from "../../src/server/observability/request-log.js";

/** A call log that writes nowhere, so tests full of deliberate refusals keep their output readable. */
export function quietLog(): RequestLog {
  return new RequestLog("info", { write: () => true });
}
