import type { Client } from "@connectrpc/connect";
import type { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";

/** A generous deadline for one health check: only a blocked serving thread misses it. */
export const HEALTH_DEADLINE_MS = 10_000;

/**
 * Runs health checks one after another until `work` settles (at least one, started before `work` is
 * awaited), and returns their statuses: a serving thread blocked by `work` shows up as no answer until it ends.
 */
export async function healthChecksWhile(
  health: Client<typeof Health>,
  work: Promise<unknown>,
): Promise<HealthCheckResponse_ServingStatus[]> {
  let done = false;
  const settled = work
    .then(
      () => undefined,
      () => undefined,
    )
    .finally(() => {
      done = true;
    });
  const out: HealthCheckResponse_ServingStatus[] = [];
  do {
    out.push((await health.check({ service: "" }, { timeoutMs: HEALTH_DEADLINE_MS })).status);
  } while (!done);
  await settled;
  return out;
}
