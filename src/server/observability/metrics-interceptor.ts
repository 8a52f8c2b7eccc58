import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { OK } from "./code-name.js";
import { ScopeViolationSchema } from "../../../gen/acms/v1/errors_pb.js";
import type { MethodMetrics, ServerMetrics } from "./server-metrics.js";
import { withMessage } from "../transport/with-message.js";

function codeOf(err: unknown): Code {
  return err instanceof ConnectError ? err.code : Code.Internal;
}

function countFailure(m: MethodMetrics, err: unknown): void {
  const code = codeOf(err);
  m.calls[code].inc();
  if (code === Code.PermissionDenied && err instanceof ConnectError && err.findDetails(ScopeViolationSchema).length > 0) {
    m.scopeViolations.inc();
  }
}

/** Counts the messages of a streaming response as they are sent, and the call once the stream ends. */
async function* observed<T>(messages: AsyncIterable<T>, m: MethodMetrics, started: bigint): AsyncIterable<T> {
  m.streamsActive.inc();
  let ended: "ok" | "failed" | undefined;
  try {
    for await (const message of messages) {
      m.messagesSent.inc();
      yield message;
    }
    ended = "ok";
  } catch (err) {
    ended = "failed";
    countFailure(m, err);
    throw err;
  } finally {
    m.streamsActive.dec();
    // Neither finished nor failed: the client went away and the iteration was stopped, a cancel.
    if (ended === undefined) m.calls[Code.Canceled].inc();
    else if (ended === "ok") m.calls[OK].inc();
    m.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
  }
}

/**
 * Feeds `metrics` with every call: its code, its latency (a stream's until its last message), the streams in
 * progress and their messages, and scope violations. Registered outside the access interceptor, so it sees
 * every refusal already translated into a ConnectError with its details.
 */
export function createMetricsInterceptor(metrics: ServerMetrics): Interceptor {
  return (next) => async (req) => {
    const m = metrics.of(req.method);
    const started = process.hrtime.bigint();
    let res;
    try {
      res = await next(req);
    } catch (err) {
      countFailure(m, err);
      m.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      throw err;
    }
    if (res.stream) return withMessage(res, observed(res.message, m, started));
    m.calls[OK].inc();
    m.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    return res;
  };
}
