import type { DescMethod } from "@bufbuild/protobuf";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { TierMetrics } from "../../application/tiers/tier-service.js";
import type { DocumentStore, StoreCounts } from "../../ports/document-store.js";
import type { Backends } from "../composition/backends.js";
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
 * metrics interceptor, index sizes (documents, chunks, vectors) and tier populations and counters (hits,
 * misses, movements) read from the backends at scrape time (so calls never pay for them), and prom-client's
 * default process metrics (event-loop lag, heap, GC). One registry per server, not the global one, so
 * several servers in one process (tests) never share counters.
 *
 * The figures are deployment-wide, every tenant summed: this listener is the operator's (loopback unless
 * ACMS_HOST says otherwise, no key), unlike GetMetrics, which answers a caller about its own scope only.
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
    const counts = this.countsReader(backends.documents);
    collectDefaultMetrics({ register: this.registry });
    this.calls = new Counter({
      name: "acms_rpc_calls_total",
      help: "RPCs finished, by service, method and gRPC code",
      labelNames: ["service", "method", "code"],
      registers,
    });
    this.duration = new Histogram({
      name: "acms_rpc_duration_seconds",
      help: "RPC latency until the last response message, by service and method",
      labelNames: ["service", "method"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.streamsActive = new Gauge({
      name: "acms_rpc_streams_active",
      help: "Streaming RPCs in progress",
      labelNames: ["service", "method"],
      registers,
    });
    this.messagesSent = new Counter({
      name: "acms_rpc_stream_messages_sent_total",
      help: "Messages sent on streaming responses",
      labelNames: ["service", "method"],
      registers,
    });
    this.scopeViolations = new Counter({
      name: "acms_scope_violations_total",
      help: "Calls refused with a ScopeViolation (PERMISSION_DENIED naming what is out of scope)",
      labelNames: ["service", "method"],
      registers,
    });
    new Gauge({
      name: "acms_index_generation",
      help: "The index generation (bumped by every committed write)",
      registers,
      async collect() {
        this.set(Number(await backends.documents.generation()));
      },
    });
    new Gauge({
      name: "acms_index_documents",
      help: "Live documents in the document store (superseded and deleted versions not counted)",
      registers,
      async collect() {
        this.set((await counts()).documents);
      },
    });
    new Gauge({
      name: "acms_index_chunks",
      help: "Chunks of the live documents in the document store",
      registers,
      async collect() {
        this.set((await counts()).chunks);
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
    new Counter({
      name: "acms_tier_hits_total",
      help: "GetFragment lookups answered from a tier, deployment-wide",
      labelNames: ["tier"],
      registers,
      collect() {
        const t = backends.tiers.totals();
        this.reset();
        this.inc({ tier: "hot" }, t.hotHits);
        this.inc({ tier: "warm" }, t.warmHits);
        this.inc({ tier: "cold" }, t.coldHits);
      },
    });
    new Counter({
      name: "acms_tier_misses_total",
      help: "GetFragment lookups a tier could not answer (they fall through to the next; cold: found nowhere), deployment-wide",
      labelNames: ["tier"],
      registers,
      collect() {
        const t = backends.tiers.totals();
        this.reset();
        this.inc({ tier: "hot" }, t.hotMisses);
        this.inc({ tier: "warm" }, t.warmMisses);
        this.inc({ tier: "cold" }, t.misses);
      },
    });
    for (const [name, help, of] of [
      ["acms_tier_promotions_total", "Fragments moved one tier up (PromoteFragment), deployment-wide", (t: TierMetrics) => t.promotions],
      [
        "acms_tier_demotions_total",
        "Fragments moved one tier down (DemoteFragment, over-budget displacement, EvictLru on hot or warm), deployment-wide",
        (t: TierMetrics) => t.demotions,
      ],
      [
        "acms_tier_evictions_total",
        "Fragments deleted out of cold (overflow, EvictLru on cold), deployment-wide",
        (t: TierMetrics) => t.evictions,
      ],
    ] as const) {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(of(backends.tiers.totals()));
        },
      });
    }
  }

  /**
   * The store's live counts, counted again only when the index generation moved since the last count (every
   * committed write bumps it), so scrapes of an idle index cost one generation read. One count serves the
   * documents and chunks gauges of a scrape.
   */
  private countsReader(documents: DocumentStore): () => Promise<StoreCounts> {
    let counted: { generation: bigint; counts: Promise<StoreCounts> } | undefined;
    return async () => {
      const generation = await documents.generation();
      if (counted?.generation !== generation) {
        counted = { generation, counts: documents.counts() };
        counted.counts.catch(() => (counted = undefined));
      }
      return counted.counts;
    };
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
