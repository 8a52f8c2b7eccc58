import type { DescMethod } from "@bufbuild/protobuf";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Backends } from "./backends.js";
import { CODE_NAMES } from "./code-name.js";

/** Latency buckets (seconds): sub-millisecond lookups up to slow SPARQL queries and long streams. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The label children of one RPC, made once so a call only increments (no label strings built per call). */
export interface MethodMetrics {
  /** Calls finished, by code index. */
  calls: Counter.Internal[];
  duration: Histogram.Internal<string>;
  streamsActive: Gauge.Internal<string>;
  messagesSent: Counter.Internal;
  scopeViolations: Counter.Internal;
}

/**
 * The Prometheus registry of one server: call counters, latency, streams and scope violations fed by the
 * metrics interceptor, index sizes and tier populations read from the backends at scrape time (so calls
 * never pay for them), and prom-client's default process metrics (event-loop lag, heap, GC). One registry
 * per server, not the global one, so several servers in one process (tests) never share counters.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly calls: Counter<"service" | "method" | "code">;
  private readonly duration: Histogram<"service" | "method">;
  private readonly streamsActive: Gauge<"service" | "method">;
  private readonly messagesSent: Counter<"service" | "method">;
  private readonly scopeViolations: Counter<"service" | "method">;
  private readonly byMethod = new WeakMap<DescMethod, MethodMetrics>();

  constructor(backends: Backends) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.calls = new Counter({ name: "acms_rpc_calls_total", help: "RPCs finished, by service, method and gRPC code", labelNames: ["service", "method", "code"], registers });
    this.duration = new Histogram({ name: "acms_rpc_duration_seconds", help: "RPC latency until the last response message, by service and method", labelNames: ["service", "method"], buckets: LATENCY_BUCKETS, registers });
    this.streamsActive = new Gauge({ name: "acms_rpc_streams_active", help: "Streaming RPCs in progress", labelNames: ["service", "method"], registers });
    this.messagesSent = new Counter({ name: "acms_rpc_stream_messages_sent_total", help: "Messages sent on streaming responses", labelNames: ["service", "method"], registers });
    this.scopeViolations = new Counter({ name: "acms_scope_violations_total", help: "Calls refused with a ScopeViolation (PERMISSION_DENIED naming what is out of scope)", labelNames: ["service", "method"], registers });
    new Gauge({
      name: "acms_index_generation",
      help: "The index generation (bumped by every committed write)",
      registers,
      async collect() {
        this.set(Number(await backends.documents.generation()));
      },
    });
    new Gauge({
      name: "acms_index_vectors",
      help: "Vector entries held by the vector backend (every chunk version)",
      registers,
      collect() {
        const size = backends.vector?.size;
        if (size !== undefined) this.set(size);
      },
    });
    new Gauge({
      name: "acms_tier_fragments",
      help: "Context fragments per tier, deployment-wide",
      labelNames: ["tier"],
      registers,
      collect() {
        for (const [tier, n] of Object.entries(backends.tiers.totals().population)) this.set({ tier }, n);
      },
    });
    new Gauge({
      name: "acms_tier_tokens",
      help: "Tokens held per tier, deployment-wide",
      labelNames: ["tier"],
      registers,
      collect() {
        for (const [tier, n] of Object.entries(backends.tiers.totals().tokens)) this.set({ tier }, n);
      },
    });
  }

  /** The children of `method`, made on its first call. */
  of(method: DescMethod): MethodMetrics {
    let m = this.byMethod.get(method);
    if (!m) {
      const service = method.parent.typeName;
      const name = method.name;
      m = {
        calls: CODE_NAMES.map((code) => this.calls.labels(service, name, code)),
        duration: this.duration.labels(service, name),
        streamsActive: this.streamsActive.labels(service, name),
        messagesSent: this.messagesSent.labels(service, name),
        scopeViolations: this.scopeViolations.labels(service, name),
      };
      this.byMethod.set(method, m);
    }
    return m;
  }
}
