import { tracingConfigFrom } from "../../src/server/observability/tracing-config.js";
import { loadConfig } from "../../src/server/composition/config.js";

describe("tracing from the standard OTEL_* variables", () => {
  test("no endpoint, OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true: no tracing at all", () => {
    expect(tracingConfigFrom({})).toBeUndefined();
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
    expect(tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined();
  });

  test("the traces URL: the signal's endpoint as given, else the base endpoint with /v1/traces", () => {
    expect(tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })?.tracesUrl).toBe("http://c:4318/v1/traces");
    expect(
      tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t:443/custom" })
        ?.tracesUrl,
    ).toBe("https://t:443/custom");
  });

  test("OTLP over gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc, or the traces-only variable): the endpoint as given, no /v1/traces", () => {
    expect(tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })?.protocol).toBe("http/protobuf");
    expect(tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toMatchObject({
      protocol: "grpc",
      tracesUrl: "http://c:4317",
    });
    expect(
      tracingConfigFrom({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://t:4317",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc",
      }),
    ).toMatchObject({ protocol: "grpc", tracesUrl: "https://t:4317" });
  });

  test("service name, resource attributes, headers, sampler and batch settings are read; defaults otherwise", () => {
    const c = tracingConfigFrom({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_SERVICE_NAME: "acms-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,team=ctx%20ops",
      OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=ops",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    })!;
    expect(c).toMatchObject({
      serviceName: "acms-eu",
      resourceAttributes: { "deployment.environment": "prod", team: "ctx ops" },
      headers: { "x-tenant": "ops" },
      sampler: "parentbased_traceidratio",
      samplerRatio: 0.25,
      batch: { scheduledDelayMs: 100, maxQueueSize: 2048 },
    });
    expect(tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toMatchObject({
      serviceName: "acms",
      sampler: "parentbased_always_on",
      timeoutMs: 10000,
    });
  });

  test.each([
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, /OTEL_EXPORTER_OTLP_PROTOCOL must be "http\/protobuf" or "grpc"/],
    [{ OTEL_TRACES_SAMPLER: "sometimes" }, /OTEL_TRACES_SAMPLER must be one of/],
    [{ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, /OTEL_TRACES_SAMPLER_ARG must be a number in \[0, 1\]/],
    [{ OTEL_TRACES_EXPORTER: "zipkin" }, /OTEL_TRACES_EXPORTER must be "otlp" or "none"/],
    [{ OTEL_EXPORTER_OTLP_HEADERS: "novalue" }, /OTEL_EXPORTER_OTLP_HEADERS must be a comma-separated list/],
    [{ OTEL_BSP_SCHEDULE_DELAY: "soon" }, /OTEL_BSP_SCHEDULE_DELAY must be an integer/],
  ])("a bad value is refused at start, naming the variable: %j", (extra, message) => {
    expect(() => tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...extra })).toThrow(message);
  });

  test("an endpoint that is not an http(s) URL is refused", () => {
    expect(() => tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "c:4318" })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http/);
  });
});
