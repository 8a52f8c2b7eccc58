import http2 from "node:http2";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { create, fromBinary, isMessage, type DescMessage, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { createAsyncIterable, compressionNegotiate } from "@connectrpc/connect/protocol";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { codeToHttpStatus, errorToJsonBytes, parseTimeout as parseConnectTimeout, trailerMux } from "@connectrpc/connect/protocol-connect";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { takeEncoded } from "../encoded-messages.js";
import { frameOf } from "../grpc-frame.js";
import type { MethodRegistry } from "./method-registry.js";
import { ReceivedHeaders, SendingHeaders } from "../../../../clients/typescript/src/node-headers.js";
import { BodyDeadline } from "../body-deadline.js";
import { admitBody, type BodyAdmissionOptions } from "../body-admission.js";
import { callAbortKey, type CallAbort } from "../call-abort.js";

const gzipAsync = promisify(gzip);

/** What the gRPC fast path needs (the body's admission as connect-node's handler has it). */
export interface GrpcStreamHandlerOptions extends BodyAdmissionOptions {
  methods: MethodRegistry;
  /** The router-wide interceptors, applied exactly as Connect applies them. */
  interceptors: readonly Interceptor[];
  maxMessageBytes: number;
  /** Responses at least this large are gzip-compressed when the client accepts gzip. */
  compressMinBytes: number;
  /** A request body that receives no bytes for this long while the call waits for it: the stream is reset (ms). */
  bodyTimeoutMs?: number;
  /** A request message must average at least this many bytes/s once `bodyTimeoutMs` of waiting has passed; 0: no rule. */
  minBodyBytesPerSecond?: number;
}

/** Takes an HTTP/2 stream when it is a gRPC call the fast path serves; false leaves it to Connect. */
export type GrpcStreamHandler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean;

type Spec = MethodImplSpec & { kind: "unary" | "server_streaming" };

/** The protocols the fast path serves: gRPC (unary and server-streaming) and Connect (unary, binary, POST). */
type FastProtocol = "grpc" | "connect";

/** Calls the fast path has taken in this process, by protocol (figures for tests: which path served a call). */
export const fastPathCalls: Record<FastProtocol, number> = { grpc: 0, connect: 0 };

/** The compressions a Connect answer may use, as connect-node's handler offers them (first the client names wins). */
const CONNECT_COMPRESSIONS = [compressionGzip, compressionBrotli];
type AnyResponse = UnaryResponse<DescMessage, DescMessage> | StreamResponse<DescMessage, DescMessage>;

function normalize(schema: DescMessage, value: unknown): Message {
  return isMessage(value, schema) ? value : create(schema, value as Record<string, unknown>);
}

async function* normalizeEach(schema: DescMessage, values: AsyncIterable<unknown>): AsyncIterable<Message> {
  for await (const v of values) yield normalize(schema, v);
}

async function single<T>(messages: AsyncIterable<T>): Promise<T> {
  const it = messages[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done === true) throw new ConnectError("protocol error: missing input message for server-streaming method", Code.Unimplemented);
  const second = await it.next();
  if (second.done !== true)
    throw new ConnectError("protocol error: received extra input message for server-streaming method", Code.Unimplemented);
  return first.value;
}

function toConnect(err: unknown): ConnectError {
  return err instanceof ConnectError ? err : new ConnectError("internal error", Code.Internal, undefined, undefined, err);
}

function ignore(): void {}

function headersOf(h: Headers, into: http2.OutgoingHttpHeaders): http2.OutgoingHttpHeaders {
  if (h instanceof SendingHeaders) return h.writeInto(into);
  h.forEach((value, key) => {
    into[key] = value;
  });
  return into;
}

/** The call a request belongs to, in its context values (which every interceptor passes on). */
const callKey = createContextKey<GrpcCall | undefined>(undefined, { description: "acms gRPC fast-path call" });

function callOf(req: UnaryRequest | StreamRequest): GrpcCall {
  const call = req.contextValues.get(callKey);
  if (!call) throw new ConnectError("internal error: an interceptor dropped the call's context values", Code.Internal);
  return call;
}

/** The interceptor chain around a method's handler, outermost first (as Connect's applyInterceptors). */
type Chain = (req: UnaryRequest | StreamRequest) => Promise<AnyResponse>;

/**
 * Builds a method's chain once (as Connect does per method, not per call): the innermost call finds the
 * call it serves through the request's context values, so no closure is made per call.
 */
function chainFor(spec: Spec, interceptors: readonly Interceptor[]): Chain {
  const { method } = spec;
  const inner: Chain =
    spec.kind === "unary"
      ? async (req) => {
          const call = callOf(req);
          return call.response(false, normalize(method.output, await spec.impl(req.message as Message, call.handlerContext(req) as never)));
        }
      : async (req) => {
          const call = callOf(req);
          const input = await single(req.message as AsyncIterable<Message>);
          return call.response(true, normalizeEach(method.output, spec.impl(input, call.handlerContext(req) as never)));
        };
  let next = inner;
  for (const interceptor of interceptors) next = interceptor(next as never) as unknown as Chain;
  return next;
}

/**
 * A gRPC server for the unary and server-streaming methods of the Connect router, written directly on
 * Node's HTTP/2 streams: the same handlers and the same interceptors (authentication, scope and field
 * checks, error translation) as the Connect path, without Connect's per-call pipeline of async iterables,
 * linked abort controllers and envelope transforms (a Health call cost about 8x a plain grpc-js
 * handler's CPU through it). It takes only what it serves exactly as Connect would: POST with
 * `application/grpc` or `application/grpc+proto`, an uncompressed request (`grpc-encoding` absent or
 * `identity`) and a method it knows; and Connect unary calls in protobuf (POST, `application/proto`,
 * no `content-encoding` or `identity`), answered as connect-node's handler answers them (the message, or
 * the error's JSON with its HTTP status; trailers as `trailer-` headers; gzip or brotli as the client's
 * `accept-encoding` names first). Everything else (gRPC-Web, Connect streams, GET and JSON, compressed
 * requests, client and bidi streams, unknown paths) stays on the Connect handler. Responses are uncompressed
 * below `compressMinBytes`. The interceptor chain of each method is built on its first call and reused.
 */
export function createGrpcStreamHandler(opts: GrpcStreamHandlerOptions): GrpcStreamHandler {
  const interceptors = [...opts.interceptors].reverse();
  const chains = new Map<Spec, Chain>();
  return (stream, headers) => {
    if (headers[":method"] !== "POST") return false;
    const contentType = headers["content-type"];
    let protocol: FastProtocol;
    if (contentType === "application/grpc" || contentType === "application/grpc+proto") {
      const encoding = headers["grpc-encoding"];
      if (encoding !== undefined && encoding !== "identity") return false;
      protocol = "grpc";
    } else if (contentType === "application/proto") {
      const encoding = headers["content-encoding"];
      if (encoding !== undefined && encoding !== "identity") return false;
      protocol = "connect";
    } else return false;
    const spec = opts.methods.get(headers[":path"] ?? "");
    if (!spec || (protocol === "connect" && spec.kind !== "unary")) return false;
    let chain = chains.get(spec);
    if (!chain) chains.set(spec, (chain = chainFor(spec, interceptors)));
    fastPathCalls[protocol] += 1;
    new GrpcCall(opts, chain, spec, stream, headers, contentType, protocol).run().catch(() => stream.destroy());
    return true;
  };
}

/**
 * The handler context of a call. Its costlier parts (signal, request headers, response headers and
 * trailers, URL) are made on first read, through getters on the class, so a call allocates no closures.
 */
class CallContext implements HandlerContext {
  readonly requestMethod = "POST";

  constructor(protected readonly call: GrpcCall) {}

  get protocolName(): string {
    return this.call.protocol;
  }

  get method(): DescMethod {
    return this.call.spec.method;
  }

  get service(): DescService {
    return this.call.spec.method.parent;
  }

  get signal(): AbortSignal {
    return this.call.signal;
  }

  timeoutMs(): number | undefined {
    const { deadline } = this.call;
    return deadline === undefined ? undefined : deadline - Date.now();
  }

  get requestHeader(): Headers {
    return this.call.requestHeaders;
  }

  get responseHeader(): Headers {
    return this.call.responseHeaders;
  }

  get responseTrailer(): Headers {
    return this.call.responseTrailers;
  }

  get values(): ContextValues {
    return this.call.values;
  }

  get url(): string {
    return this.call.url;
  }
}

/**
 * The context the handler sees when an interceptor passed on a request of its own: that request's
 * service, header, signal and context values (as Connect merges them); the rest is the call's.
 */
class InterceptedContext extends CallContext {
  constructor(
    call: GrpcCall,
    private readonly req: UnaryRequest | StreamRequest,
  ) {
    super(call);
  }

  override get service(): DescService {
    return this.req.service;
  }

  override get signal(): AbortSignal {
    return this.req.signal;
  }

  override get requestHeader(): Headers {
    return this.req.header;
  }

  override get values(): ContextValues {
    return this.req.contextValues;
  }
}

/**
 * The request an interceptor sees: data fields, and getters on the class for the parts made on first read.
 * Interceptors that pass on a changed request derive it (`withMessage`), so the getters stay reachable.
 */
class CallRequest {
  readonly requestMethod = "POST";

  constructor(
    private readonly call: GrpcCall,
    readonly stream: boolean,
    readonly service: DescService,
    readonly method: DescMethod,
    readonly contextValues: ContextValues,
    readonly message: unknown,
  ) {}

  get url(): string {
    return this.call.url;
  }

  get signal(): AbortSignal {
    return this.call.signal;
  }

  get header(): Headers {
    return this.call.requestHeaders;
  }
}

/** The response the innermost call makes; header and trailer are the call's, made on first read. */
class CallResponse {
  constructor(
    private readonly call: GrpcCall,
    readonly stream: boolean,
    readonly service: DescService,
    readonly method: DescMethod,
    readonly message: unknown,
  ) {}

  get header(): Headers {
    return this.call.responseHeaders;
  }

  get trailer(): Headers {
    return this.call.responseTrailers;
  }
}

/** One gRPC call on one HTTP/2 stream. */
class GrpcCall implements CallAbort {
  /** Made on first use of the call's signal: most calls finish without anyone listening to it. */
  private controller: AbortController | undefined;
  private abortReason: ConnectError | undefined;
  private requestHeader: Headers | undefined;
  readonly values = createContextValues();
  private ownRequest: CallRequest | undefined;
  private ownContext: CallContext | undefined;
  private done = false;
  private headersSent = false;
  private timer: NodeJS.Timeout | undefined;
  deadline: number | undefined;
  private compressing = false;
  /** The response object the innermost call made: when the interceptors pass it on unchanged, nothing needs copying. */
  private own: CallResponse | undefined;
  private responseHeader: Headers | undefined;
  private responseTrailer: Headers | undefined;

  constructor(
    private readonly opts: GrpcStreamHandlerOptions,
    private readonly chain: Chain,
    readonly spec: Spec,
    private readonly stream: http2.ServerHttp2Stream,
    private readonly headers: http2.IncomingHttpHeaders,
    private readonly contentType: string,
    readonly protocol: FastProtocol,
  ) {
    this.values.set(callKey, this);
    this.values.set(callAbortKey, this);
  }

  async run(): Promise<void> {
    const { stream } = this;
    stream.on("error", ignore);
    stream.once("close", () => this.cancel());
    try {
      const timeout =
        this.protocol === "grpc"
          ? parseTimeout(this.header("grpc-timeout"), Number.MAX_SAFE_INTEGER)
          : parseConnectTimeout(this.header("connect-timeout-ms"), Number.MAX_SAFE_INTEGER);
      if (timeout.error) throw timeout.error;
      if (timeout.timeoutMs !== undefined) {
        this.deadline = Date.now() + timeout.timeoutMs;
        this.timer = setTimeout(() => this.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeout.timeoutMs);
      }
      const { method } = this.spec;
      // The header as the access interceptor reads it (req.header): the same value for the same rule.
      const mayRead = admitBody(
        this.opts,
        method.parent.typeName,
        this.requestHeaders.get("authorization"),
        this.values,
        this.stream.session,
      );
      // A call refused from its headers never has its body read: the stream's flow control holds the client
      // to one window, and Node resets the stream (NO_ERROR) once the answer is sent, as HTTP/2 allows.
      const input = mayRead
        ? fromBinaryChecked(method.input, await (this.protocol === "grpc" ? this.readMessage() : this.readConnectBody()))
        : create(method.input);
      if (this.spec.kind === "unary") await this.unary(input);
      else await this.serverStream(input);
    } catch (err) {
      if (!this.stream.destroyed) {
        if (this.protocol === "grpc") this.fail(toConnect(err));
        else await this.failConnect(toConnect(err));
      }
    } finally {
      this.done = true;
      clearTimeout(this.timer);
    }
  }

  private header(name: string): string | null {
    const v = this.headers[name];
    return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
  }

  private cancel(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.abort(new ConnectError("the operation was aborted", Code.Canceled));
  }

  /** Aborts the call's signal (the first reason stays); the stream is the caller's to end. */
  abort(reason: ConnectError): void {
    this.abortReason ??= reason;
    this.controller?.abort(reason);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** Reads the one enveloped request message, refusing any envelope over the size limit as soon as its header arrives. */
  private readMessage(): Promise<Uint8Array> {
    const max = this.opts.maxMessageBytes;
    let limit = -1;
    return this.readBody(
      (chunks, size, chunk) => {
        if (limit < 0 && size >= 5) {
          const head = chunks.length === 1 ? chunk : Buffer.concat(chunks);
          if ((head[0] & 1) === 1)
            return new ConnectError("protocol error: received a compressed message without grpc-encoding", Code.InvalidArgument);
          const length = head.readUInt32BE(1);
          if (length > max)
            return new ConnectError(`message size ${length} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted);
          limit = 5 + length;
        }
        return limit >= 0 && size > limit
          ? new ConnectError("protocol error: received extra input message", Code.Unimplemented)
          : undefined;
      },
      (body, size) => {
        if (size === 0)
          return new ConnectError(
            `protocol error: missing input message for ${this.spec.kind === "unary" ? "unary" : "server-streaming"} method`,
            Code.Unimplemented,
          );
        if (limit < 0 || size < limit) return new ConnectError(`protocol error: incomplete envelope (${size} bytes)`, Code.InvalidArgument);
        return body.subarray(5, limit);
      },
    );
  }

  /**
   * Reads a Connect unary request's body (the message, unframed), refusing one over the size limit as soon as
   * its `content-length` says so or its bytes pass it, and one that ends short of or runs past its
   * `content-length` (as connect's readAllBytes does).
   */
  private readConnectBody(): Promise<Uint8Array> {
    const max = this.opts.maxMessageBytes;
    const declared = this.header("content-length");
    const promised = declared !== null && /^\d+$/.test(declared) ? Number(declared) : undefined;
    if (promised !== undefined && promised > max)
      return Promise.reject(
        new ConnectError(`message size ${promised} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted),
      );
    const broken = (size: number) => new ConnectError(`protocol error: promised ${promised} bytes, received ${size}`, Code.InvalidArgument);
    return this.readBody(
      (_chunks, size) => {
        if (promised !== undefined && size > promised) return broken(size);
        return size > max
          ? new ConnectError(`message size is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted)
          : undefined;
      },
      (body, size) => (promised !== undefined && size < promised ? broken(size) : body),
    );
  }

  /**
   * Reads the request's body: `check` sees each chunk as it arrives (an error stops reading, the rest of the
   * body is drained unread), `done` the whole body once it ended. A body that stops arriving, or trickles under
   * the minimum rate, is abandoned: the stream is reset, and the call ends as the client's cancel.
   */
  private readBody(
    check: (chunks: Buffer[], size: number, chunk: Buffer) => ConnectError | undefined,
    done: (body: Buffer, size: number) => Uint8Array | ConnectError,
  ): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const stallMs = this.opts.bodyTimeoutMs;
      const deadline =
        stallMs === undefined
          ? undefined
          : new BodyDeadline({ stallMs, graceMs: stallMs, minBytesPerSecond: this.opts.minBodyBytesPerSecond ?? 0 }, () =>
              this.stream.close(http2.constants.NGHTTP2_CANCEL),
            );
      const onData = (chunk: Buffer) => {
        deadline?.received(chunk.length);
        deadline?.waiting();
        chunks.push(chunk);
        size += chunk.length;
        const err = check(chunks, size, chunk);
        if (err === undefined) return;
        deadline?.stop();
        this.stream.off("data", onData);
        this.stream.off("end", onEnd);
        this.stream.off("close", onClose);
        this.stream.resume();
        reject(err);
      };
      const onClose = () => {
        deadline?.stop();
        this.stream.off("data", onData);
        this.stream.off("end", onEnd);
        reject(new ConnectError("the operation was aborted", Code.Canceled));
      };
      const onEnd = () => {
        deadline?.stop();
        this.stream.off("close", onClose);
        const out = done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), size);
        if (out instanceof ConnectError) reject(out);
        else resolve(out);
      };
      this.stream.on("data", onData);
      this.stream.once("end", onEnd);
      this.stream.once("close", onClose);
      deadline?.waiting();
    });
  }

  /** The request's metadata as Headers, made on first use, reading Node's header object until more is asked than `get`. */
  get requestHeaders(): Headers {
    return (this.requestHeader ??= new ReceivedHeaders(this.headers));
  }

  get responseHeaders(): Headers {
    return (this.responseHeader ??= new SendingHeaders());
  }

  get responseTrailers(): Headers {
    return (this.responseTrailer ??= new SendingHeaders());
  }

  get url(): string {
    return `http://${this.header(":authority") ?? "localhost"}${this.header(":path")}`;
  }

  /** The context the handler sees: the call's own, or one that takes a request an interceptor made (see InterceptedContext). */
  handlerContext(req: UnaryRequest | StreamRequest): HandlerContext {
    const ctx = (this.ownContext ??= new CallContext(this));
    return (req as unknown) === this.ownRequest ? ctx : new InterceptedContext(this, req);
  }

  /** What the innermost call answers (see chainFor). */
  response(stream: boolean, message: unknown): AnyResponse {
    const { method } = this.spec;
    return (this.own = new CallResponse(this, stream, method.parent, method, message)) as unknown as AnyResponse;
  }

  private request(stream: boolean, message: unknown): UnaryRequest | StreamRequest {
    const { method } = this.spec;
    return (this.ownRequest = new CallRequest(this, stream, method.parent, method, this.values, message)) as unknown as
      UnaryRequest | StreamRequest;
  }

  private async unary(input: Message): Promise<void> {
    const res = (await this.chain(this.request(false, input))) as UnaryResponse<DescMessage, DescMessage>;
    this.adopt(res);
    if (this.protocol === "connect") {
      await this.answerConnect(200, "application/proto", this.encoded(this.spec.method.output, res.message), undefined);
      return;
    }
    // The answer goes with the stream's end: nothing after it is held back, and Node shuts a stream that awaits
    // trailers only once its last write has completed, so waiting for `drain` first (a search's answer is over
    // the write buffer) would only add a turn before the trailers.
    const frame = await this.frame(this.spec.method.output, res.message);
    if (frame) this.finish(frame);
  }

  /** `message`'s bytes, refused over the size limit. */
  private encoded(schema: DescMessage, message: Message): Uint8Array {
    const bytes: Uint8Array = takeEncoded(schema, message);
    if (bytes.length > this.opts.maxMessageBytes) {
      throw new ConnectError(
        `message size ${bytes.length} is larger than configured writeMaxBytes ${this.opts.maxMessageBytes}`,
        Code.ResourceExhausted,
      );
    }
    return bytes;
  }

  /**
   * A Connect unary answer, as connect-node's handler writes one: the status, the response headers (with
   * `metadata`, an error's, over them) and the trailers as `trailer-` headers, the body compressed when the
   * client accepts an encoding the server offers and it is at least `compressMinBytes`, and its length.
   */
  private async answerConnect(status: number, contentType: string, body: Uint8Array, metadata: Headers | undefined): Promise<void> {
    // Node's header object built directly, as `sendHeaders` does for gRPC (no Headers copy, no trailerMux).
    const out: http2.OutgoingHttpHeaders = { ":status": status };
    if (this.responseHeader) headersOf(this.responseHeader, out);
    out["content-type"] = contentType;
    if (metadata) headersOf(metadata, out);
    this.responseTrailer?.forEach((value, key) => (out[`trailer-${key}`] = value));
    // Only a body large enough to compress asks which encoding the client accepts.
    if (body.byteLength >= this.opts.compressMinBytes) {
      const { response } = compressionNegotiate(CONNECT_COMPRESSIONS, null, this.header("accept-encoding"), "accept-encoding");
      if (response) {
        body = await response.compress(body);
        out["content-encoding"] = response.name;
      }
    }
    if (this.stream.destroyed || this.stream.closed) return;
    out["content-length"] = String(body.byteLength);
    this.headersSent = true;
    this.stream.respond(out);
    this.stream.end(body);
  }

  /** A Connect unary error: its JSON (code, message, details) with the code's HTTP status. */
  private async failConnect(err: ConnectError): Promise<void> {
    if (this.stream.destroyed || this.stream.closed || this.headersSent) return;
    await this.answerConnect(codeToHttpStatus(err.code), "application/json", errorToJsonBytes(err, undefined), err.metadata);
  }

  private async serverStream(input: Message): Promise<void> {
    const res = (await this.chain(this.request(true, createAsyncIterable([input])))) as StreamResponse<DescMessage, DescMessage>;
    this.adopt(res);
    for await (const m of res.message) {
      if (this.stream.destroyed) return;
      await this.send(this.spec.method.output, m);
    }
    this.finish();
  }

  /** An interceptor may answer with header and trailer objects of its own: fold them into the call's. */
  private adopt(res: AnyResponse): void {
    if ((res as unknown) === this.own) return;
    if (res.header !== this.responseHeader) res.header.forEach((v, k) => this.responseHeaders.set(k, v));
    if (res.trailer !== this.responseTrailer) res.trailer.forEach((v, k) => this.responseTrailers.set(k, v));
  }

  private sendHeaders(compressed: boolean): void {
    if (this.headersSent) return;
    this.headersSent = true;
    const out: http2.OutgoingHttpHeaders = { ":status": 200, "content-type": this.contentType };
    if (this.responseHeader) headersOf(this.responseHeader, out);
    if (compressed) out["grpc-encoding"] = "gzip";
    this.stream.respond(out, { waitForTrailers: true });
  }

  /**
   * One message as its gRPC frame, gzip-compressed when large enough and the client accepts it, with the
   * response headers sent before it; undefined when the stream was destroyed meanwhile.
   */
  private async frame(schema: DescMessage, message: Message): Promise<Uint8Array | undefined> {
    let bytes = this.encoded(schema, message);
    const compress =
      bytes.length >= this.opts.compressMinBytes &&
      /\bgzip\b/.test(this.header("grpc-accept-encoding") ?? "") &&
      (!this.headersSent || this.compressing);
    if (compress) bytes = await gzipAsync(bytes);
    if (this.stream.destroyed) return undefined;
    if (!this.headersSent) this.compressing = compress;
    this.sendHeaders(this.compressing);
    return frameOf(compress ? 1 : 0, bytes);
  }

  /** Writes one message of a stream, waiting for the write buffer to drain when it is full. */
  private async send(schema: DescMessage, message: Message): Promise<void> {
    const frame = await this.frame(schema, message);
    if (!frame || this.stream.write(frame)) return;
    await new Promise<void>((resolve) => {
      const go = () => {
        this.stream.off("drain", go);
        this.stream.off("close", go);
        resolve();
      };
      this.stream.on("drain", go);
      this.stream.on("close", go);
    });
  }

  /** Ends the answer (after `lastFrame`, when given) with the OK status in its trailers. */
  private finish(lastFrame?: Uint8Array): void {
    if (this.stream.destroyed) return;
    this.sendHeaders(false);
    const trailers: http2.OutgoingHttpHeaders = { "grpc-status": "0" };
    if (this.responseTrailer) headersOf(this.responseTrailer, trailers);
    trailers["grpc-status"] = "0";
    this.stream.once("wantTrailers", () => this.stream.sendTrailers(trailers));
    this.stream.end(lastFrame);
  }

  private fail(err: ConnectError): void {
    if (this.stream.destroyed || this.stream.closed) return;
    const status = setTrailerStatus(new Headers(), err);
    if (!this.headersSent) {
      // Trailers-only: one HEADERS frame with the status.
      this.headersSent = true;
      const out: http2.OutgoingHttpHeaders = { ":status": 200, "content-type": this.contentType };
      if (this.responseHeader) headersOf(this.responseHeader, out);
      if (this.responseTrailer) headersOf(this.responseTrailer, out);
      this.stream.respond(headersOf(status, out), { endStream: true });
      return;
    }
    const trailers: http2.OutgoingHttpHeaders = {};
    if (this.responseTrailer) headersOf(this.responseTrailer, trailers);
    this.stream.once("wantTrailers", () => this.stream.sendTrailers(headersOf(status, trailers)));
    this.stream.end();
  }
}

/** `bytes` decoded; else INVALID_ARGUMENT with the message the Connect handler's path answers (see node-handler.ts). */
function fromBinaryChecked(schema: DescMessage, bytes: Uint8Array): Message {
  try {
    return fromBinary(schema, bytes);
  } catch (err) {
    throw new ConnectError(
      `the request body is not a valid ${schema.typeName} message (${err instanceof Error ? err.message : String(err)})`,
      Code.InvalidArgument,
    );
  }
}
