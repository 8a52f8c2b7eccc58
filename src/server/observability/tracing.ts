import { AsyncLocalStorage } from "node:async_hooks";
import {
  ROOT_CONTEXT,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanKind,
  type TextMapGetter,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as OTLPGrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { createEmptyMetadata } from "@opentelemetry/otlp-grpc-exporter-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import type { TracingConfig } from "./tracing-config.js";

/** Reads a W3C `traceparent`/`tracestate` from the request's Headers (gRPC metadata and HTTP headers alike). */
const headersGetter: TextMapGetter<Headers> = {
  get: (carrier, key) => carrier.get(key) ?? undefined,
  keys: (carrier) => [...carrier.keys()],
};

function samplerOf(config: TracingConfig): Sampler {
  switch (config.sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(config.samplerRatio);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.samplerRatio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The OTLP exporter of the configured protocol: HTTP with protobuf bodies, or gRPC (the headers as its metadata). */
function exporterOf(config: TracingConfig): SpanExporter {
  if (config.protocol === "grpc") {
    const metadata = createEmptyMetadata();
    for (const [key, value] of Object.entries(config.headers)) metadata.set(key, value);
    return new OTLPGrpcTraceExporter({ url: config.tracesUrl, metadata, timeoutMillis: config.timeoutMs });
  }
  return new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers, timeoutMillis: config.timeoutMs });
}

/**
 * The server's OpenTelemetry tracing: a tracer exporting over OTLP (HTTP or gRPC) in batches, the W3C trace-context
 * propagator, and the call's span context carried through its async work in an AsyncLocalStorage of its own.
 * Nothing is registered globally (no global tracer provider, context manager or propagator), so two servers
 * in one process, or an application embedding the server, keep their own tracing. Made only when
 * `tracingConfigFrom` found an endpoint; absent, nothing traces and nothing is paid.
 * @example const tracing = Tracing.start(config.tracing); ...; await tracing.shutdown();
 */
export class Tracing {
  private readonly active = new AsyncLocalStorage<Context>();
  private readonly propagator = new W3CTraceContextPropagator();

  private constructor(
    private readonly provider: BasicTracerProvider,
    readonly tracer: Tracer,
  ) {}

  static start(config: TracingConfig): Tracing {
    const exporter = exporterOf(config);
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ ...config.resourceAttributes, "service.name": config.serviceName }),
      sampler: samplerOf(config),
      spanProcessors: [
        new BatchSpanProcessor(exporter, {
          scheduledDelayMillis: config.batch.scheduledDelayMs,
          maxQueueSize: config.batch.maxQueueSize,
          maxExportBatchSize: Math.min(config.batch.maxExportBatchSize, config.batch.maxQueueSize),
          exportTimeoutMillis: config.batch.exportTimeoutMs,
        }),
      ],
    });
    return new Tracing(provider, provider.getTracer("acms"));
  }

  /** The caller's trace context from `traceparent`/`tracestate` in `headers` (the root context when there is none, or it is malformed). */
  extract(headers: Headers): Context {
    return this.propagator.extract(ROOT_CONTEXT, headers, headersGetter);
  }

  /** Starts a span under `parent` and returns it with the context that holds it. */
  startSpan(name: string, kind: SpanKind, attributes: Attributes, parent: Context): { span: Span; context: Context } {
    const span = this.tracer.startSpan(name, { kind, attributes }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  /** Runs `fn` with `context` as the active one: spans started under it (`current`) become its children. */
  run<T>(context: Context, fn: () => T): T {
    return this.active.run(context, fn);
  }

  /** The active call's context, or undefined outside any call (background loads, start-up): such work is not traced. */
  current(): Context | undefined {
    return this.active.getStore();
  }

  /** Exports every span still queued and stops the exporter; an unreachable receiver never fails a stop. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown().catch(() => undefined);
  }
}
