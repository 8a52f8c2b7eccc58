import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { leanUnaryTransport } from "../../clients/typescript/src/lean-unary-transport.js";

// The SDK's unary path makes a call's AbortSignal only when something reads it (clients/typescript/src/
// lean-unary-transport.ts, CallSignal); these cases check that the call still ends as the signal says when
// nothing does, and when an interceptor hands on a request of its own.

let raw: http2.Http2Server;
const sessions = new Set<http2.ServerHttp2Session>();
/** What the caller aborts with (a reason of this realm: jest's sandbox is another realm than Node's DOMException's). */
const STOP = new ConnectError("stopped by the caller", Code.Canceled);
let url: string;
/** Each stream the server saw: whether the request's body arrived, and the code its stream closed with. */
const seen: Array<{ body: boolean; rst: number | undefined }> = [];

beforeAll(async () => {
  raw = http2.createServer();
  raw.on("session", (session) => sessions.add(session));
  // Never answers: a call ends only by its signal.
  raw.on("stream", (stream) => {
    const entry: { body: boolean; rst: number | undefined } = { body: false, rst: undefined };
    seen.push(entry);
    stream.on("data", () => (entry.body = true));
    stream.on("close", () => (entry.rst = stream.rstCode));
    stream.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const session of sessions) session.destroy();
  await new Promise<void>((resolve) => raw.close(() => resolve()));
});

/** A session manager whose next `request` waits for `open()` (a connection still being made), then opens the stream. */
class GatedSessionManager extends Http2SessionManager {
  private gate: Promise<void> = Promise.resolve();
  open: () => void = () => undefined;

  holdNext(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  override async request(...args: Parameters<Http2SessionManager["request"]>): ReturnType<Http2SessionManager["request"]> {
    await this.gate;
    return super.request(...args);
  }
}

function client(sm: Http2SessionManager, interceptors: Interceptor[] = []) {
  const transport = leanUnaryTransport("grpc", createGrpcTransport({ baseUrl: url, sessionManager: sm, interceptors }), {
    baseUrl: url,
    sessionManager: sm,
    interceptors,
  });
  return createClient(Health, transport);
}

async function codeOf(call: Promise<unknown>): Promise<Code | "answered"> {
  try {
    await call;
    return "answered";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

/** Waits until the server has seen `n` streams, each closed. */
async function closedStreams(n: number): Promise<void> {
  while (seen.length < n || seen.slice(0, n).some((s) => s.rst === undefined)) await new Promise((r) => setTimeout(r, 5));
}

test("a call aborted while its stream is being opened is CANCELED, and its request is never sent", async () => {
  const sm = new GatedSessionManager(url);
  const health = client(sm);
  sm.holdNext();
  const aborting = new AbortController();
  const call = codeOf(health.check({}, { signal: aborting.signal }));
  aborting.abort(STOP);
  sm.open();
  expect(await call).toBe(Code.Canceled);
  await closedStreams(1);
  expect(seen[0]).toEqual({ body: false, rst: http2.constants.NGHTTP2_CANCEL });
  sm.abort();
});

test.each([
  ["nothing reads the call's signal", (): Interceptor => (next) => (req) => next(req)],
  ["an interceptor reads it and hands the request on", (): Interceptor => (next) => (req) => (req.signal.aborted ? next(req) : next(req))],
  [
    "an interceptor hands on a copy of the request",
    (): Interceptor => (next) => (req) => next({ ...req, header: new Headers(req.header) }),
  ],
  [
    "an interceptor sets a signal of its own that follows it",
    (): Interceptor => (next) => (req) => {
      const own = new AbortController();
      const original = req.signal;
      original.addEventListener("abort", () => own.abort(original.reason));
      (req as { signal: AbortSignal }).signal = own.signal;
      expect(req.signal).toBe(own.signal);
      expect(original).not.toBe(own.signal);
      return next(req);
    },
  ],
])("a deadline and a caller's abort end the call when %s", async (_name, interceptor) => {
  const sm = new Http2SessionManager(url);
  const health = client(sm, [interceptor()]);
  const before = seen.length;
  expect(await codeOf(health.check({}, { timeoutMs: 50 }))).toBe(Code.DeadlineExceeded);
  const aborting = new AbortController();
  const call = codeOf(health.check({}, { signal: aborting.signal }));
  setTimeout(() => aborting.abort(STOP), 30);
  expect(await call).toBe(Code.Canceled);
  await closedStreams(before + 2);
  // The deadline resets its stream with INTERNAL_ERROR, a cancel with CANCEL (as the SDK always has).
  expect(seen.slice(before).map((s) => s.rst)).toEqual([http2.constants.NGHTTP2_INTERNAL_ERROR, http2.constants.NGHTTP2_CANCEL]);
  sm.abort();
});
