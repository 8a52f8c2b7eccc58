/**
 * The gRPC benchmark's load generator: a separate process (so its CPU never counts as the server's) that
 * drives a grpc-js client against one server at a time. It takes jobs over the IPC channel
 * (`child_process.fork`), sends pre-serialized request bytes and counts response bytes without decoding
 * them, so the client side costs the same whichever server answers.
 */
import * as grpc from "@grpc/grpc-js";

/** One measured run: `calls` calls of `path` with at most `concurrency` in flight. */
export interface LoadJob {
  kind: "unary" | "stream";
  address: string;
  path: string;
  /** The serialized request, base64. */
  request: string;
  metadata: Record<string, string>;
  concurrency: number;
  calls: number;
  /** Unmeasured calls first (JIT warm-up, connection set-up). */
  warmup: number;
}

/** What a run measured: throughput, latencies (ms) and, for streams, time to the first message. */
export interface LoadResult {
  callsPerSecond: number;
  p50: number;
  p99: number;
  /** Streams: the median time to the first message (ms). */
  firstP50?: number;
  /** Streams: messages received per call (the last call's count). */
  messages?: number;
  errors: number;
}

const clients = new Map<string, grpc.Client>();

function clientFor(address: string): grpc.Client {
  let c = clients.get(address);
  if (!c) {
    c = new grpc.Client(address, grpc.credentials.createInsecure());
    clients.set(address, c);
  }
  return c;
}

const identity = (b: Buffer): Buffer => b;

function metadataOf(fields: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(fields)) md.set(k, v);
  return md;
}

interface CallTiming {
  total: number;
  first?: number;
  messages?: number;
}

function unaryCall(job: LoadJob, request: Buffer): Promise<CallTiming> {
  const client = clientFor(job.address);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(job.path, identity, identity, request, metadataOf(job.metadata), (err) => {
      if (err) reject(err);
      else resolve({ total: performance.now() - t0 });
    });
  });
}

function streamCall(job: LoadJob, request: Buffer): Promise<CallTiming> {
  const client = clientFor(job.address);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const call = client.makeServerStreamRequest(job.path, identity, identity, request, metadataOf(job.metadata));
    let first: number | undefined;
    let messages = 0;
    call.on("data", () => {
      first ??= performance.now() - t0;
      messages++;
    });
    call.on("error", reject);
    call.on("end", () => resolve({ total: performance.now() - t0, first, messages }));
  });
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

async function drive(job: LoadJob, calls: number): Promise<{ timings: CallTiming[]; seconds: number; errors: number }> {
  const request = Buffer.from(job.request, "base64");
  const call = job.kind === "unary" ? unaryCall : streamCall;
  const timings: CallTiming[] = [];
  let errors = 0;
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < calls) {
      next++;
      try {
        timings.push(await call(job, request));
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(job.concurrency, calls) }, worker));
  return { timings, seconds: (performance.now() - t0) / 1000, errors };
}

/** Runs one job: the warm-up calls, then the measured ones. */
export async function runJob(job: LoadJob): Promise<LoadResult> {
  if (job.warmup > 0) await drive(job, job.warmup);
  const { timings, seconds, errors } = await drive(job, job.calls);
  const totals = timings.map((t) => t.total);
  const firsts = timings.flatMap((t) => (t.first === undefined ? [] : [t.first]));
  return {
    callsPerSecond: timings.length / seconds,
    p50: percentile(totals, 0.5),
    p99: percentile(totals, 0.99),
    firstP50: firsts.length > 0 ? percentile(firsts, 0.5) : undefined,
    messages: timings.at(-1)?.messages,
    errors,
  };
}

if (process.send) {
  process.on("message", (msg: "stop" | { job: LoadJob }) => {
    if (msg === "stop") {
      for (const c of clients.values()) c.close();
      process.exit(0);
    } else {
      runJob(msg.job).then(
        (result) => process.send!({ result }),
        (err: unknown) => process.send!({ error: String(err) }),
      );
    }
  });
  process.send({ ready: true });
}
