import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  HealthListResponseSchema,
  type HealthCheckResponse,
} from "../../../gen/grpc/health/v1/health_pb.js";
import type { ServingState } from "../observability/serving-state.js";

/** Resolves at the next change of `state` (a service ready, draining) or when the call is cancelled. */
function changedOrCancelled(state: ServingState, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      off();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const off = state.onChange(done);
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * grpc.health.v1.Health over the router it is registered on: the overall status ("", the server accepts
 * calls) and every service the router serves are SERVING until a graceful shutdown starts, NOT_SERVING
 * after; a service whose backend is still loading (`ServingState.waitFor`) is NOT_SERVING until it is
 * loaded, and a Watch is told when that changes. Any other name is NOT_FOUND (Check) or SERVICE_UNKNOWN
 * (Watch). The service list is read from the router on the first call, so routes registered after this
 * one are covered too.
 * @example router => healthRoutes(state)(router)
 */
export function healthRoutes(state: ServingState): (router: ConnectRouter) => void {
  return (router) => {
    let names: Set<string> | undefined;
    const served = () => (names ??= new Set(["", ...router.handlers.map((h) => h.service.typeName)]));
    const known = (service: string) => served().has(service);
    const statusOf = (service: string): ServingStatus => {
      if (!known(service)) return ServingStatus.SERVICE_UNKNOWN;
      return state.isServing(service) ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    };
    const answer = (status: ServingStatus): HealthCheckResponse => create(HealthCheckResponseSchema, { status });

    router.service(Health, {
      check(req) {
        if (!known(req.service)) throw new ConnectError(`unknown service "${req.service.slice(0, 200)}"`, Code.NotFound);
        return answer(statusOf(req.service));
      },
      async *watch(req, ctx: HandlerContext) {
        let last: ServingStatus | undefined;
        for (;;) {
          const now = statusOf(req.service);
          if (now !== last) yield answer((last = now));
          // The stream ends on drain so it does not hold the shutdown open; the client re-watches elsewhere.
          if (!state.serving || ctx.signal.aborted) return;
          // Checked and subscribed in one synchronous step, so a change while the yield waited is not missed.
          if (statusOf(req.service) === last) await changedOrCancelled(state, ctx.signal);
        }
      },
      list() {
        return create(HealthListResponseSchema, { statuses: Object.fromEntries([...served()].map((n) => [n, answer(statusOf(n))])) });
      },
    });
  };
}
