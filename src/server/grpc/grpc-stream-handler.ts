import type http2 from "node:http2";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { create, fromBinary, isMessage, type DescMessage, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { takeEncoded } from "../encoded-messages.js";
import type { MethodRegistry } from "./method-registry.js";
import { RawRequestHeaders } from "./raw-request-headers.js";

const gzipAsync = promisify(gzip);

/** What the gRPC fast path needs. */
export interface GrpcStreamHandlerOptions {
  methods: MethodRegistry;
  /** The router-wide interceptors, applied exactly as Connect applies them. */
  interceptors: readonly Interceptor[];
  maxMessageBytes: number;
  /** Responses at least this large are gzip-compressed when the client accepts gzip. */
  compressMinBytes: number;
}

/** Takes an HTTP/2 stream when it is a gRPC call the fast path serves; false leaves it to Connect. */
export type GrpcStreamHandler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean;

type Spec = MethodImplSpec & { kind: "unary" | "server_streaming" };
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
  if (second.done !== true) throw new ConnectError("protocol error: received extra input message for server-streaming method", Code.Unimplemented);
  return first.value;
}

function envelope(flags: number, bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + bytes.length);
  out[0] = flags;
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

function toConnect(err: unknown): ConnectError {
  return err instanceof ConnectError ? err : new ConnectError("internal error", Code.Internal, undefined, undefined, err);
}

function headersOf(h: Headers, into: http2.OutgoingHttpHeaders): http2.OutgoingHttpHeaders {
  h.forEach((value, key) => {
    into[key] = value;
  });
  return into;
}

/**
 * A gRPC server for the unary and server-streaming methods of the Connect router, written directly on
 * Node's HTTP/2 streams: the same handlers and the same interceptors (authentication, scope and field
 * checks, error translation) as the Connect path, without Connect's per-call pipeline of async iterables,
 * linked abort controllers and envelope transforms (a Health call cost about 8x a plain grpc-js
 * handler's CPU through it). It takes only what it serves exactly as Connect would: POST with
 * `application/grpc` or `application/grpc+proto`, an uncompressed request (`grpc-encoding` absent or
 * `identity`) and a method it knows; everything else (gRPC-Web, Connect, JSON, compressed requests,
 * client and bidi streams, unknown paths) stays on the Connect handler. Responses are uncompressed below
 * `compressMinBytes`.
 */
export function createGrpcStreamHandler(opts: GrpcStreamHandlerOptions): GrpcStreamHandler {
  const interceptors = [...opts.interceptors].reverse();
  return (stream, headers) => {
    if (headers[":method"] !== "POST") return false;
    const contentType = headers["content-type"];
    if (contentType !== "application/grpc" && contentType !== "application/grpc+proto") return false;
    const encoding = headers["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;
    const spec = opts.methods.get(headers[":path"] ?? "");
    if (!spec) return false;
    new GrpcCall(opts, interceptors, spec, stream, headers, contentType).run().catch(() => stream.destroy());
    return true;
  };
}

/** One gRPC call on one HTTP/2 stream. */
class GrpcCall {
  /** Made on first use of the call's signal: most calls finish without anyone listening to it. */
  private controller: AbortController | undefined;
  private abortReason: ConnectError | undefined;
  private requestHeader: Headers | undefined;
  private readonly values = createContextValues();
  private ownRequest: UnaryRequest | StreamRequest | undefined;
  private done = false;
  private headersSent = false;
  private timer: NodeJS.Timeout | undefined;
  private deadline: number | undefined;
  private compressing = false;
  /** The response object the innermost call made: when the interceptors pass it on unchanged, nothing needs copying. */
  private own: AnyResponse | undefined;
  private responseHeader: Headers | undefined;
  private responseTrailer: Headers | undefined;

  constructor(
    private readonly opts: GrpcStreamHandlerOptions,
    private readonly interceptors: readonly Interceptor[],
    private readonly spec: Spec,
    private readonly stream: http2.ServerHttp2Stream,
    private readonly headers: http2.IncomingHttpHeaders,
    private readonly contentType: string,
  ) {}

  async run(): Promise<void> {
    const { stream } = this;
    stream.on("error", () => undefined);
    stream.once("close", () => this.cancel());
    try {
      const timeout = parseTimeout(this.header("grpc-timeout"), Number.MAX_SAFE_INTEGER);
      if (timeout.error) throw timeout.error;
      if (timeout.timeoutMs !== undefined) {
        this.deadline = Date.now() + timeout.timeoutMs;
        this.timer = setTimeout(() => this.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeout.timeoutMs);
      }
      const input = fromBinaryChecked(this.spec.method.input, await this.readMessage());
      if (this.spec.kind === "unary") await this.unary(input);
      else await this.serverStream(input);
    } catch (err) {
      if (!this.stream.destroyed) this.fail(toConnect(err));
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

  private abort(reason: ConnectError): void {
    this.abortReason ??= reason;
    this.controller?.abort(reason);
  }

  private get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** Reads the one enveloped request message, refusing any envelope over the size limit as soon as its header arrives. */
  private readMessage(): Promise<Uint8Array> {
    const max = this.opts.maxMessageBytes;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let limit = -1;
      const fail = (err: ConnectError) => {
        this.stream.off("data", onData);
        this.stream.off("end", onEnd);
        this.stream.off("close", onClose);
        this.stream.resume();
        reject(err);
      };
      const onData = (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (limit < 0 && size >= 5) {
          const head = chunks.length === 1 ? chunk : Buffer.concat(chunks);
          if ((head[0] & 1) === 1) return fail(new ConnectError("protocol error: received a compressed message without grpc-encoding", Code.InvalidArgument));
          const length = head.readUInt32BE(1);
          if (length > max) return fail(new ConnectError(`message size ${length} is larger than configured readMaxBytes ${max}`, Code.ResourceExhausted));
          limit = 5 + length;
        }
        if (limit >= 0 && size > limit) fail(new ConnectError("protocol error: received extra input message", Code.Unimplemented));
      };
      const onClose = () => {
        this.stream.off("data", onData);
        this.stream.off("end", onEnd);
        reject(new ConnectError("the operation was aborted", Code.Canceled));
      };
      const onEnd = () => {
        this.stream.off("close", onClose);
        if (size === 0) return reject(new ConnectError(`protocol error: missing input message for ${this.spec.kind === "unary" ? "unary" : "server-streaming"} method`, Code.Unimplemented));
        if (limit < 0 || size < limit) return reject(new ConnectError(`protocol error: incomplete envelope (${size} bytes)`, Code.InvalidArgument));
        const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        resolve(body.subarray(5, limit));
      };
      this.stream.on("data", onData);
      this.stream.once("end", onEnd);
      this.stream.once("close", onClose);
    });
  }

  /** The request's metadata as Headers, made on first use, reading Node's header object until more is asked than `get`. */
  private get requestHeaders(): Headers {
    return (this.requestHeader ??= new RawRequestHeaders(this.headers));
  }

  private context(): HandlerContext {
    const call = this;
    const { method } = this.spec;
    const { deadline } = this;
    return {
      method,
      service: method.parent,
      get signal() {
        return call.signal;
      },
      timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
      requestMethod: "POST",
      get requestHeader() {
        return call.requestHeaders;
      },
      get responseHeader() {
        return (call.responseHeader ??= new Headers());
      },
      get responseTrailer() {
        return (call.responseTrailer ??= new Headers());
      },
      protocolName: "grpc",
      values: this.values,
      get url() {
        return call.url;
      },
    };
  }

  private get url(): string {
    return `http://${this.header(":authority") ?? "localhost"}${this.header(":path")}`;
  }

  /**
   * The context the handler sees: the call's own, or, when an interceptor passed on a request of its own,
   * one that takes that request's header, signal and context values (as Connect merges them).
   */
  private handlerContext(ctx: HandlerContext, req: UnaryRequest | StreamRequest): HandlerContext {
    if (req === this.ownRequest) return ctx;
    return Object.create(ctx, {
      service: { value: req.service },
      // Getters: the header and the signal are costly to make, and most handlers never read them.
      requestHeader: { get: () => req.header },
      signal: { get: () => req.signal },
      values: { value: req.contextValues },
    }) as HandlerContext;
  }

  /** The request an interceptor sees; like the context, its costlier parts are made on first read. */
  private request<S extends boolean>(stream: S, message: unknown): S extends true ? StreamRequest : UnaryRequest {
    const call = this;
    return (this.ownRequest = {
      stream,
      service: this.spec.method.parent,
      method: this.spec.method,
      requestMethod: "POST",
      get url() {
        return call.url;
      },
      get signal() {
        return call.signal;
      },
      get header() {
        return call.requestHeaders;
      },
      contextValues: this.values,
      message,
    } as never);
  }

  /** The interceptors around `call`, outermost first (as Connect's applyInterceptors); headers and trailers are read lazily. */
  private intercepted(ctx: HandlerContext, call: (req: UnaryRequest | StreamRequest) => Promise<Pick<AnyResponse, "stream" | "message">>) {
    const made = async (req: UnaryRequest | StreamRequest): Promise<AnyResponse> => {
      const { stream, message } = await call(req);
      const res = {
        stream,
        message,
        service: this.spec.method.parent,
        method: this.spec.method,
        get header() {
          return ctx.responseHeader;
        },
        get trailer() {
          return ctx.responseTrailer;
        },
      } as AnyResponse;
      this.own = res;
      return res;
    };
    let next = made;
    for (const interceptor of this.interceptors) next = interceptor(next as never) as typeof next;
    return next;
  }

  private async unary(input: Message): Promise<void> {
    const { method, impl } = this.spec as MethodImplSpec & { kind: "unary" };
    const ctx = this.context();
    const next = this.intercepted(ctx, async (req) => ({
      stream: false,
      message: normalize(method.output, await impl(req.message as Message, this.handlerContext(ctx, req) as never)),
    }));
    const res = (await next(this.request(false, input))) as UnaryResponse<DescMessage, DescMessage>;
    this.adopt(res, ctx);
    await this.send(method.output, res.message);
    this.finish();
  }

  private async serverStream(input: Message): Promise<void> {
    const { method, impl } = this.spec as MethodImplSpec & { kind: "server_streaming" };
    const ctx = this.context();
    const next = this.intercepted(ctx, async (req) => ({
      stream: true,
      message: normalizeEach(
        method.output,
        impl(await single(req.message as AsyncIterable<Message>), this.handlerContext(ctx, req) as never),
      ),
    }));
    const res = (await next(this.request(true, createAsyncIterable([input])))) as StreamResponse<DescMessage, DescMessage>;
    this.adopt(res, ctx);
    for await (const m of res.message) {
      if (this.stream.destroyed) return;
      await this.send(method.output, m);
    }
    this.finish();
  }

  /** An interceptor may answer with header and trailer objects of its own: fold them into the call's. */
  private adopt(res: AnyResponse, ctx: HandlerContext): void {
    if (res === this.own) return;
    if (res.header !== this.responseHeader) res.header.forEach((v, k) => ctx.responseHeader.set(k, v));
    if (res.trailer !== this.responseTrailer) res.trailer.forEach((v, k) => ctx.responseTrailer.set(k, v));
  }

  private sendHeaders(compressed: boolean): void {
    if (this.headersSent) return;
    this.headersSent = true;
    const out: http2.OutgoingHttpHeaders = { ":status": 200, "content-type": this.contentType };
    if (this.responseHeader) headersOf(this.responseHeader, out);
    if (compressed) out["grpc-encoding"] = "gzip";
    this.stream.respond(out, { waitForTrailers: true });
  }

  private async send(schema: DescMessage, message: Message): Promise<void> {
    let bytes: Uint8Array = takeEncoded(schema, message);
    if (bytes.length > this.opts.maxMessageBytes) {
      throw new ConnectError(`message size ${bytes.length} is larger than configured writeMaxBytes ${this.opts.maxMessageBytes}`, Code.ResourceExhausted);
    }
    const compress = bytes.length >= this.opts.compressMinBytes && /\bgzip\b/.test(this.header("grpc-accept-encoding") ?? "") && (!this.headersSent || this.compressing);
    if (compress) bytes = await gzipAsync(bytes);
    if (this.stream.destroyed) return;
    if (!this.headersSent) this.compressing = compress;
    this.sendHeaders(this.compressing);
    if (!this.stream.write(envelope(compress ? 1 : 0, bytes))) {
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
  }

  private finish(): void {
    if (this.stream.destroyed) return;
    this.sendHeaders(false);
    const trailers: http2.OutgoingHttpHeaders = { "grpc-status": "0" };
    if (this.responseTrailer) headersOf(this.responseTrailer, trailers);
    trailers["grpc-status"] = "0";
    this.stream.once("wantTrailers", () => this.stream.sendTrailers(trailers));
    this.stream.end();
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

function fromBinaryChecked(schema: DescMessage, bytes: Uint8Array): Message {
  try {
    return fromBinary(schema, bytes);
  } catch (err) {
    throw new ConnectError(`parse binary: ${err instanceof Error ? err.message : String(err)}`, Code.InvalidArgument);
  }
}
