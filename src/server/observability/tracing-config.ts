/** The sampler named by OTEL_TRACES_SAMPLER (the OpenTelemetry SDK specification's values). */
export type TracesSampler =
  "always_on" | "always_off" | "traceidratio" | "parentbased_always_on" | "parentbased_always_off" | "parentbased_traceidratio";

const SAMPLERS: readonly TracesSampler[] = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
];

/** The OTLP transports spans are exported over (OTEL_EXPORTER_OTLP_PROTOCOL's values this server speaks). */
export type OtlpProtocol = "http/protobuf" | "grpc";

/** Where and how spans are exported, read once from the standard `OTEL_*` variables (see tracingConfigFrom). */
export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL (default `http/protobuf`). */
  protocol: OtlpProtocol;
  /**
   * Where spans go. `http/protobuf`: the traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
   * OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`); `grpc`: the collector's endpoint as given (either variable;
   * `http://` dials plaintext, `https://` TLS).
   */
  tracesUrl: string;
  /** Headers sent with every export (OTEL_EXPORTER_OTLP_TRACES_HEADERS, else OTEL_EXPORTER_OTLP_HEADERS). */
  headers: Record<string, string>;
  /** Export timeout, ms (OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT; default 10000). */
  timeoutMs: number;
  /** The resource's `service.name` (OTEL_SERVICE_NAME; default "acms"). */
  serviceName: string;
  /** Further resource attributes (OTEL_RESOURCE_ATTRIBUTES: `key=value,...`, percent-encoded values). */
  resourceAttributes: Record<string, string>;
  sampler: TracesSampler;
  /** The ratio of the traceidratio samplers (OTEL_TRACES_SAMPLER_ARG; default 1). */
  samplerRatio: number;
  /** The batch span processor (OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_EXPORT_TIMEOUT). */
  batch: { scheduledDelayMs: number; maxQueueSize: number; maxExportBatchSize: number; exportTimeoutMs: number };
}

function set(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v !== undefined && v.length > 0 ? v : undefined;
}

function intOf(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = set(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

/** `key=value,key2=value2` with percent-encoded values (the W3C Baggage octets OTEL_*_HEADERS and OTEL_RESOURCE_ATTRIBUTES use). */
function pairsOf(env: NodeJS.ProcessEnv, name: string): Record<string, string> {
  const raw = set(env, name);
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  for (const part of raw.split(",")) {
    if (part.trim().length === 0) continue;
    const eq = part.indexOf("=");
    if (eq <= 0) throw new Error(`${name} must be a comma-separated list of key=value pairs`);
    try {
      out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new Error(`${name} holds a malformed percent-encoding`);
    }
  }
  return out;
}

function urlOf(name: string, value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
    return value;
  } catch {
    throw new Error(`${name} must be an http:// or https:// URL, got "${value}"`);
  }
}

/**
 * Tracing from the standard OpenTelemetry variables, or undefined (no tracer, no interceptor, no wrapped
 * engine: nothing is paid) when no OTLP endpoint is set, OTEL_TRACES_EXPORTER is `none` or OTEL_SDK_DISABLED
 * is `true`. Export is OTLP over HTTP with protobuf bodies (`http/protobuf`, the specification's default) or
 * OTLP over gRPC (`grpc`); another OTEL_EXPORTER_OTLP_PROTOCOL (`http/json`) is refused at start rather than
 * silently ignored. A bad value throws an Error naming the variable.
 * @example tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })?.tracesUrl // "http://127.0.0.1:4318/v1/traces"
 */
export function tracingConfigFrom(env: NodeJS.ProcessEnv): TracingConfig | undefined {
  if (set(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const exporter = set(env, "OTEL_TRACES_EXPORTER")?.toLowerCase() ?? "otlp";
  if (exporter === "none") return undefined;
  if (exporter !== "otlp") throw new Error(`OTEL_TRACES_EXPORTER must be "otlp" or "none", got "${exporter}"`);
  const tracesEndpoint = set(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const endpoint = set(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (tracesEndpoint === undefined && endpoint === undefined) return undefined;
  const protocolName = set(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = set(env, protocolName) ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "grpc")
    throw new Error(`${protocolName} must be "http/protobuf" or "grpc" (the protocols this server exports with), got "${protocol}"`);
  // gRPC has no per-signal path: either endpoint is the collector's address as given.
  const tracesUrl =
    tracesEndpoint !== undefined
      ? urlOf("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tracesEndpoint)
      : protocol === "grpc"
        ? urlOf("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint as string)
        : `${urlOf("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint as string).replace(/\/+$/, "")}/v1/traces`;
  const sampler = (set(env, "OTEL_TRACES_SAMPLER")?.toLowerCase() ?? "parentbased_always_on") as TracesSampler;
  if (!SAMPLERS.includes(sampler)) throw new Error(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}, got "${sampler}"`);
  let samplerRatio = 1;
  const ratioRaw = set(env, "OTEL_TRACES_SAMPLER_ARG");
  if (ratioRaw !== undefined && sampler.endsWith("traceidratio")) {
    samplerRatio = Number(ratioRaw);
    if (!Number.isFinite(samplerRatio) || samplerRatio < 0 || samplerRatio > 1)
      throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a number in [0, 1], got "${ratioRaw}"`);
  }
  const headersName = set(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS") ? "OTEL_EXPORTER_OTLP_TRACES_HEADERS" : "OTEL_EXPORTER_OTLP_HEADERS";
  const timeoutName = set(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : "OTEL_EXPORTER_OTLP_TIMEOUT";
  return {
    protocol,
    tracesUrl,
    headers: pairsOf(env, headersName),
    timeoutMs: intOf(env, timeoutName, 10_000, 1),
    serviceName: set(env, "OTEL_SERVICE_NAME") ?? "acms",
    resourceAttributes: pairsOf(env, "OTEL_RESOURCE_ATTRIBUTES"),
    sampler,
    samplerRatio,
    batch: {
      scheduledDelayMs: intOf(env, "OTEL_BSP_SCHEDULE_DELAY", 5000, 0),
      maxQueueSize: intOf(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1),
      maxExportBatchSize: intOf(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1),
      exportTimeoutMs: intOf(env, "OTEL_BSP_EXPORT_TIMEOUT", 30_000, 1),
    },
  };
}
