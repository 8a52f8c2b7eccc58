import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  HealthListResponseSchema,
  type HealthCheckResponse,
} from "../../../gen/grpc/health/v1/health_pb.js";
import type { ServingState } from "../serving-state.js";

/** Resolves when the server starts draining or the call is cancelled, whichever comes first. */
function drainedOrCancelled(state: ServingState, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      off();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const off = state.onDrain(done);
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * grpc.health.v1.Health over the router it is registered on: the overall status ("") and every service
 * the router serves are SERVING until a graceful shutdown starts, NOT_SERVING after; any other name is
 * NOT_FOUND (Check) or SERVICE_UNKNOWN (Watch). The service list is read from the router on the first
 * call, so routes registered after this one are covered too.
 * @example router => healthRoutes(state)(router)
 */
export function healthRoutes(state: ServingState): (router: ConnectRouter) => void {
  return (router) => {
    let names: Set<string> | undefined;
    const served = () => (names ??= new Set(["", ...router.handlers.map((h) => h.service.typeName)]));
    const known = (service: string) => served().has(service);
    const statusOf = (service: string): ServingStatus => {
      if (!known(service)) return ServingStatus.SERVICE_UNKNOWN;
      return state.serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    };
    const answer = (status: ServingStatus): HealthCheckResponse => create(HealthCheckResponseSchema, { status });

    router.service(Health, {
      check(req) {
        if (!known(req.service)) throw new ConnectError(`unknown service "${req.service.slice(0, 200)}"`, Code.NotFound);
        return answer(statusOf(req.service));
      },
      async *watch(req, ctx: HandlerContext) {
        yield answer(statusOf(req.service));
        if (!state.serving) return;
        await drainedOrCancelled(state, ctx.signal);
        // The stream ends on drain so it does not hold the shutdown open; the client re-watches elsewhere.
        if (!ctx.signal.aborted && known(req.service)) yield answer(ServingStatus.NOT_SERVING);
      },
      list() {
        return create(HealthListResponseSchema, { statuses: Object.fromEntries([...served()].map((n) => [n, answer(statusOf(n))])) });
      },
    });
  };
}
