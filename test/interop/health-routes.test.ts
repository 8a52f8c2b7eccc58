import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { healthRoutes } from "../../src/server/routes/health-routes.js";
import { ServingState } from "../../src/server/observability/serving-state.js";

describe("health routes (in-memory router)", () => {
  function setup() {
    const state = new ServingState();
    const transport = createRouterTransport((router) => {
      healthRoutes(state)(router);
      // Registered after health on purpose: the service list is read at call time.
      router.service(RegistryService, {});
    });
    return { state, health: createClient(Health, transport) };
  }

  it("answers SERVING for the server and every routed service, NOT_SERVING once draining", async () => {
    const { state, health } = setup();
    expect((await health.check({ service: "" })).status).toBe(ServingStatus.SERVING);
    expect((await health.check({ service: "acms.v1.RegistryService" })).status).toBe(ServingStatus.SERVING);
    state.startDraining();
    expect((await health.check({ service: "" })).status).toBe(ServingStatus.NOT_SERVING);
    expect((await health.check({ service: "acms.v1.RegistryService" })).status).toBe(ServingStatus.NOT_SERVING);
    const { statuses } = await health.list({});
    expect(Object.keys(statuses).sort()).toEqual(["", "acms.v1.RegistryService", "grpc.health.v1.Health"]);
    expect(Object.values(statuses).map((s) => s.status)).toEqual([
      ServingStatus.NOT_SERVING,
      ServingStatus.NOT_SERVING,
      ServingStatus.NOT_SERVING,
    ]);
  });

  it("refuses unknown names with NOT_FOUND, draining or not", async () => {
    const { state, health } = setup();
    await expect(health.check({ service: "acms.v1.ScopeService" })).rejects.toMatchObject({ code: Code.NotFound });
    state.startDraining();
    await expect(health.check({ service: "x" })).rejects.toMatchObject({ code: Code.NotFound });
  });

  it("a watch opened while draining reports NOT_SERVING and ends at once", async () => {
    const { state, health } = setup();
    state.startDraining();
    const seen: ServingStatus[] = [];
    for await (const r of health.watch({ service: "" })) seen.push(r.status);
    expect(seen).toEqual([ServingStatus.NOT_SERVING]);
  });

  it("tells every watcher once when draining starts", () => {
    const state = new ServingState();
    const calls: string[] = [];
    state.onDrain(() => calls.push("a"));
    const off = state.onDrain(() => calls.push("b"));
    off();
    state.startDraining();
    state.startDraining();
    state.onDrain(() => calls.push("late"));
    expect(calls).toEqual(["a", "late"]);
    expect(state.serving).toBe(false);
  });

  it("a service whose backend is loading is NOT_SERVING until it is loaded, and a watch is told", async () => {
    const { state, health } = setup();
    let loaded!: () => void;
    state.waitFor(["acms.v1.RegistryService"], new Promise<void>((resolve) => (loaded = resolve)), () => undefined);
    expect((await health.check({ service: "acms.v1.RegistryService" })).status).toBe(ServingStatus.NOT_SERVING);
    expect((await health.check({ service: "" })).status).toBe(ServingStatus.SERVING);
    expect((await health.check({ service: "grpc.health.v1.Health" })).status).toBe(ServingStatus.SERVING);
    const watch = health.watch({ service: "acms.v1.RegistryService" })[Symbol.asyncIterator]();
    expect((await watch.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
    const second = watch.next();
    loaded();
    expect((await second).value?.status).toBe(ServingStatus.SERVING);
    expect((await health.check({ service: "acms.v1.RegistryService" })).status).toBe(ServingStatus.SERVING);
    const third = watch.next();
    state.startDraining();
    expect((await third).value?.status).toBe(ServingStatus.NOT_SERVING);
    expect((await watch.next()).done).toBe(true);
  });

  it("a service waiting on two loads is NOT_SERVING until both are loaded", async () => {
    const { state, health } = setup();
    let first!: () => void;
    let second!: () => void;
    const firstLoaded = new Promise<void>((resolve) => (first = resolve));
    const secondLoaded = new Promise<void>((resolve) => (second = resolve));
    state.waitFor(["acms.v1.RegistryService", "acms.v1.VectorBackendService"], firstLoaded, () => undefined);
    state.waitFor(["acms.v1.RegistryService", "acms.v1.GraphBackendService"], secondLoaded, () => undefined);
    second();
    await secondLoaded;
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.isServing("acms.v1.GraphBackendService")).toBe(true);
    expect(state.isServing("acms.v1.VectorBackendService")).toBe(false);
    expect((await health.check({ service: "acms.v1.RegistryService" })).status).toBe(ServingStatus.NOT_SERVING);
    first();
    await firstLoaded;
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.isServing("acms.v1.VectorBackendService")).toBe(true);
    expect((await health.check({ service: "acms.v1.RegistryService" })).status).toBe(ServingStatus.SERVING);
  });

  it("a backend that failed to load stays NOT_SERVING and its failure is reported once", async () => {
    const { state, health } = setup();
    const failures: unknown[] = [];
    const failed = Promise.reject(new Error("store unreadable"));
    state.waitFor(["acms.v1.RegistryService"], failed, (err) => failures.push(err));
    await failed.catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(failures).toEqual([new Error("store unreadable")]);
    expect((await health.check({ service: "acms.v1.RegistryService" })).status).toBe(ServingStatus.NOT_SERVING);
    expect((await health.check({ service: "" })).status).toBe(ServingStatus.SERVING);
  });
});
