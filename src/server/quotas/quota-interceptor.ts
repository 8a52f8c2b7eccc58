import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ContextValues, type Interceptor, type StreamRequest, type UnaryRequest } from "@connectrpc/connect";
import { RetryInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { principalKey } from "../access/context-keys.js";
import { encodeForSend } from "../transport/encoded-messages.js";
import { QuotaLedger, type QuotaLimits, type QuotaRefusal } from "./quota-ledger.js";
import { admittedUpstreamKey } from "./admitted-upstream.js";
import { withMessage } from "../transport/with-message.js";
import { callAbortKey } from "../transport/call-abort.js";

/** A RESOURCE_EXHAUSTED carrying google.rpc.RetryInfo, so clients know when to come back. */
export function resourceExhausted(message: string, retryAfterMs: number): ConnectError {
  return new ConnectError(message, Code.ResourceExhausted, undefined, [
    { desc: RetryInfoSchema, value: create(RetryInfoSchema, { retryDelay: durationFromMs(Math.max(1, retryAfterMs)) }) },
  ]);
}

/** Rows of one response message: the entries of its top-level lists (results, rows, triples, items...). */
function rowsOf(schema: DescMessage, message: Message): number {
  let rows = 0;
  for (const field of schema.fields) {
    if (field.fieldKind === "list") rows += ((message as unknown as Record<string, unknown[]>)[field.localName] ?? []).length;
  }
  return rows;
}

/** Counts a call's rows and bytes against its budget, throwing RESOURCE_EXHAUSTED when past it. */
class CostMeter {
  private rows = 0;
  private bytes = 0;

  constructor(
    private readonly limits: QuotaLimits,
    private readonly schema: DescMessage,
  ) {}

  add(message: Message, rows: number): void {
    this.rows += rows;
    if (this.rows > this.limits.resultRows) {
      throw resourceExhausted(
        `the answer exceeds the per-call budget of ${this.limits.resultRows} rows: narrow the query or lower its limit`,
        1000,
      );
    }
    this.bytes += encodeForSend(this.schema, message).byteLength;
    if (this.bytes > this.limits.resultBytes) {
      throw resourceExhausted(
        `the answer exceeds the per-call budget of ${this.limits.resultBytes} bytes: narrow the query or lower its limit`,
        1000,
      );
    }
  }
}

/**
 * The request a call under a time budget passes on: `req` with its signal replaced by `budgeted()` (made on
 * first read), every other field read through from `req`, so getters stay lazy. Delegation, not
 * `Object.create(req, ...)`: with every call's request made the prototype of another object, the request
 * and all it reached outlived young-generation GC (measured on the gRPC bench: 18.6 KB promoted to the old
 * generation per Search call, none without it), which cost more GC time than all the call's allocations.
 */
class BudgetedRequest {
  constructor(
    private readonly req: UnaryRequest | StreamRequest,
    private readonly budgeted: () => AbortSignal,
    /** A client stream's messages, counted as progress as they arrive (see createQuotaInterceptor); else the request's own. */
    private readonly messages?: AsyncIterable<unknown>,
  ) {}

  get stream(): boolean {
    return this.req.stream;
  }

  get service(): UnaryRequest["service"] {
    return this.req.service;
  }

  get method(): UnaryRequest["method"] | StreamRequest["method"] {
    return this.req.method;
  }

  get requestMethod(): string {
    return this.req.requestMethod;
  }

  get url(): string {
    return this.req.url;
  }

  get signal(): AbortSignal {
    return this.budgeted();
  }

  get header(): Headers {
    return this.req.header;
  }

  get contextValues(): ContextValues {
    return this.req.contextValues;
  }

  get message(): unknown {
    return this.messages ?? this.req.message;
  }
}

/** Whether the client sends a stream of messages (client-streaming or bidi): its time budget follows its progress. */
function clientStreams(req: UnaryRequest | StreamRequest): boolean {
  return req.stream && (req.method.methodKind === "client_streaming" || req.method.methodKind === "bidi_streaming");
}

/** `source`'s messages, calling `onMessage` as each arrives. */
async function* progressOf<T>(source: AsyncIterable<T>, onMessage: () => void): AsyncGenerator<T> {
  for await (const m of source) {
    onMessage();
    yield m;
  }
}

/** The admission of a call admitted upstream (see admittedUpstreamKey): nothing to release. */
const UPSTREAM = { release: () => undefined };

/** Called with every call refused over quota (the audit log). */
export type QuotaRefusalSink = (refusal: { principal: string; rpc: string; reason: string }) => void;

/**
 * Per-principal quotas, router-wide and after the access interceptor (which names the principal): calls
 * in flight, calls per second with a burst, and a per-call cost budget (response bytes and rows, and
 * running time: the call's signal aborts at the budget and the call ends DEADLINE_EXCEEDED). A call whose client
 * sends a stream (UpsertDocuments) has the budget from its last message received: an upload that keeps sending
 * is never cut however long it runs, one that stalls for the budget is (and the work after its last message
 * has the budget too). Over quota
 * is RESOURCE_EXHAUSTED with RetryInfo. Unauthenticated services (health) are never throttled: they have
 * no principal. `ledger` is the one the server's HTTP endpoints share, so a principal has one quota however it calls.
 */
export function createQuotaInterceptor(
  limits: QuotaLimits,
  onRefused?: QuotaRefusalSink,
  ledger: QuotaLedger = new QuotaLedger(limits),
): Interceptor {
  return (next) => async (req) => {
    const principal = req.contextValues.get(principalKey);
    if (!principal) return next(req);
    // An RPC of an MCP request the endpoint admitted already (in process only) spends no second admission.
    const admitted = req.contextValues.get(admittedUpstreamKey) ? UPSTREAM : ledger.admit(principal.name);
    if ("reason" in admitted) {
      const refusal = admitted as QuotaRefusal;
      onRefused?.({ principal: principal.name, rpc: `${req.service.typeName}/${req.method.name}`, reason: refusal.reason });
      throw resourceExhausted(`Over quota: ${refusal.reason}; retry in ${refusal.retryAfterMs} ms`, refusal.retryAfterMs);
    }
    // The time budget, made cheap for the common call that finishes well inside it and never reads its
    // signal: one timer; the AbortController and the combined signal only when the handler asks for them.
    let overBudget: ConnectError | undefined;
    let budget: AbortController | undefined;
    let rejectOverTime: (err: ConnectError) => void = () => undefined;
    // A client stream's budget runs from its last message: the timer, when it fires, re-arms for what is left.
    const streaming = clientStreams(req);
    let lastProgress = streaming ? performance.now() : 0;
    const expire = () => {
      if (streaming) {
        const left = lastProgress + limits.callMs - performance.now();
        if (left >= 1) {
          timer = setTimeout(expire, left);
          return;
        }
      }
      overBudget = new ConnectError(
        streaming
          ? `the stream sent nothing for its time budget of ${limits.callMs} ms`
          : `the call ran past its time budget of ${limits.callMs} ms`,
        Code.DeadlineExceeded,
      );
      budget?.abort(overBudget);
      if (abortsCall) callAbort!.abort(overBudget);
      rejectOverTime(overBudget);
    };
    let timer = setTimeout(expire, limits.callMs);
    // The call's own signal, when the transport offers to abort it and the request still carries it: the budget
    // aborts it. Else one controller that the call's own signal aborts too (not AbortSignal.any, which costs a
    // combined signal, weak references and a finalizer per call).
    const callAbort = req.contextValues.get(callAbortKey);
    let abortsCall = false;
    let unlink: (() => void) | undefined;
    const callSignal = () => {
      if (budget) return budget.signal;
      const outer = req.signal;
      if (abortsCall) return outer;
      if (callAbort !== undefined && callAbort.signal === outer) {
        abortsCall = true;
        if (overBudget) callAbort.abort(overBudget);
        return outer;
      }
      const own = (budget = new AbortController());
      if (overBudget) own.abort(overBudget);
      else if (outer.aborted) own.abort(outer.reason);
      else {
        const follow = () => own.abort(outer.reason);
        outer.addEventListener("abort", follow, { once: true });
        unlink = () => outer.removeEventListener("abort", follow);
      }
      return own.signal;
    };
    const done = () => {
      clearTimeout(timer);
      unlink?.();
      admitted.release();
    };
    const meter = new CostMeter(limits, req.method.output);
    try {
      const progress = streaming ? progressOf(req.message as AsyncIterable<unknown>, () => (lastProgress = performance.now())) : undefined;
      const inner = new BudgetedRequest(req, callSignal, progress) as unknown as typeof req;
      // The handler's answer, or DEADLINE_EXCEEDED once the budget runs out, whichever comes first.
      const res = await new Promise<Awaited<ReturnType<typeof next>>>((resolve, reject) => {
        rejectOverTime = reject;
        next(inner).then(resolve, reject);
      });
      if (!res.stream) {
        meter.add(res.message, rowsOf(req.method.output, res.message));
        done();
        return res;
      }
      const messages = res.message;
      return withMessage(
        res,
        (async function* metered() {
          try {
            for await (const m of messages) {
              if (overBudget) throw overBudget;
              meter.add(m, 1);
              yield m;
            }
          } finally {
            done();
          }
        })(),
      );
    } catch (err) {
      done();
      throw err;
    }
  };
}
