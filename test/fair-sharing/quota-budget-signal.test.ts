import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { HealthCheckRequestSchema, HealthCheckResponseSchema, Health } from "../../gen/grpc/health/v1/health_pb.js";
import { createQuotaInterceptor } from "../../src/server/quotas/quota-interceptor.js";
import { DEFAULT_QUOTA_LIMITS } from "../../src/server/quotas/quota-ledger.js";
import { principalKey } from "../../src/server/access/context-keys.js";
import { callAbortKey, type CallAbort } from "../../src/server/transport/call-abort.js";

const BUDGET_MS = 50;

/** A unary request as a transport hands it on, its signal `signal` (and, when `offer`, the means to abort it). */
function request(controller: AbortController, offer: boolean): UnaryRequest {
  const values = createContextValues();
  values.set(principalKey, { name: "p", projects: [], write: false, allowsProject: () => false });
  if (offer) values.set(callAbortKey, { signal: controller.signal, abort: (r) => controller.abort(r) } satisfies CallAbort);
  return {
    stream: false,
    service: Health,
    method: Health.method.check,
    requestMethod: "POST",
    url: "http://localhost/grpc.health.v1.Health/Check",
    signal: controller.signal,
    header: new Headers(),
    contextValues: values,
    message: create(HealthCheckRequestSchema),
  } as UnaryRequest;
}

/** Runs `handler` under a budget of BUDGET_MS: the signal it was given and how the call ended. */
async function underBudget(
  controller: AbortController,
  offer: boolean,
  handler: (signal: AbortSignal) => Promise<void>,
): Promise<{ seen: AbortSignal; err: ConnectError | undefined }> {
  let seen: AbortSignal | undefined;
  const next = async (req: UnaryRequest): Promise<UnaryResponse> => {
    seen = req.signal;
    await handler(req.signal);
    return {
      stream: false,
      service: Health,
      method: Health.method.check,
      header: new Headers(),
      trailer: new Headers(),
      message: create(HealthCheckResponseSchema),
    } as UnaryResponse;
  };
  const call = createQuotaInterceptor({ ...DEFAULT_QUOTA_LIMITS, callMs: BUDGET_MS })(next as never);
  const err = await (call(request(controller, offer)) as Promise<unknown>).then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  return { seen: seen!, err };
}

/** A handler that waits until its signal aborts. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));

describe.each([
  ["the transport offers the call's signal", true],
  ["the transport offers nothing", false],
])("the time budget's signal (%s)", (_name, offer) => {
  it("aborts the handler's signal with DEADLINE_EXCEEDED when the budget runs out", async () => {
    const controller = new AbortController();
    const { seen, err } = await underBudget(controller, offer, untilAborted);
    expect(err?.code).toBe(Code.DeadlineExceeded);
    expect(seen.aborted).toBe(true);
    expect(ConnectError.from(seen.reason).code).toBe(Code.DeadlineExceeded);
    // The call's own signal when the transport offered it; a signal that follows it otherwise.
    expect(seen === controller.signal).toBe(offer);
  });

  it("aborts the handler's signal when the call is cancelled", async () => {
    const controller = new AbortController();
    const cancelled = new ConnectError("the operation was aborted", Code.Canceled);
    const { seen } = await underBudget(controller, offer, (signal) => {
      setTimeout(() => controller.abort(cancelled), 5);
      return untilAborted(signal);
    });
    expect(seen.reason).toBe(cancelled);
  });

  it("leaves the signal alone when the call ends inside its budget", async () => {
    const controller = new AbortController();
    const { seen, err } = await underBudget(controller, offer, async (signal) => {
      expect(signal.aborted).toBe(false);
    });
    expect(err).toBeUndefined();
    await new Promise((r) => setTimeout(r, BUDGET_MS * 2));
    expect(seen.aborted).toBe(false);
    expect(controller.signal.aborted).toBe(false);
  });
});
