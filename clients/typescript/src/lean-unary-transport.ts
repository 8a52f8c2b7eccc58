import { constants as h2, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { create, isMessage, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";
import {
  appendHeaders,
  Code,
  ConnectError,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  createMethodUrl,
  getAbortSignalReason,
  type Compression,
  type MethodSerializationLookup,
} from "@connectrpc/connect/protocol";
import {
  requestHeaderWithCompression as grpcRequestHeader,
  validateResponseWithCompression as validateGrpcResponse,
  validateTrailer,
} from "@connectrpc/connect/protocol-grpc";
import {
  errorFromJsonBytes,
  requestHeaderWithCompression as connectRequestHeader,
  trailerDemux,
  validateResponseWithCompression as validateConnectResponse,
} from "@connectrpc/connect/protocol-connect";
import { compressionBrotli, compressionGzip, type Http2SessionManager } from "@connectrpc/connect-node";
import { decodeSearchResponse } from "./search-response-decoding.js";
import { ReceivedHeaders, SendingHeaders } from "./node-headers.js";

/** Largest message read or written (connect-node's default: the envelope's limit, 4 GiB). */
const MAX_MESSAGE_BYTES = 0xffffffff;
/** Compressions the client accepts in responses, as connect-node's gRPC transport offers them. */
const ACCEPT_COMPRESSION: Compression[] = [compressionGzip, compressionBrotli];

/** What the lean unary path needs: where, over which HTTP/2 connection, and the interceptors. */
export interface LeanUnaryOptions {
  baseUrl: string;
  sessionManager: Http2SessionManager;
  interceptors: Interceptor[];
  defaultTimeoutMs?: number;
}

/** The protocols whose unary calls the lean path makes: gRPC and Connect (binary, POST). */
export type LeanUnaryProtocol = "grpc" | "connect";

/**
 * connect-node's gRPC or Connect transport with unary calls made straight on the HTTP/2 stream: the request is
 * written at once (gRPC: one envelope; Connect: the message) and the answer's bytes are gathered and parsed when
 * the stream ends. connect's own unary path runs every call through its universal HTTP client and a pipeline
 * of async iterables (request body, envelope split, decompression, parse), which cost ~1 ms of client CPU a
 * call (more than the server spent answering a small search); this costs ~0.4. Everything a caller sees stays
 * connect's: the same interceptors, deadline and abort signal as its `runUnaryCall` (see CallSignal), the same
 * request headers (connect's own functions for each protocol), the same checks of the response's status,
 * headers and trailers (gRPC: `validateResponseWithCompression`, `validateTrailer`; Connect:
 * `validateResponseWithCompression`, `trailerDemux`, the error's JSON through `errorFromJsonBytes`: errors
 * with their details, such as a ScopeViolation), gzip and brotli answers, and the same codes for HTTP/2 resets
 * and connection failures. Streaming calls go through `streaming` (connect's transport) unchanged.
 */
export function leanUnaryTransport(protocol: LeanUnaryProtocol, streaming: Transport, opts: LeanUnaryOptions): Transport {
  const dialect = protocol === "grpc" ? GRPC : CONNECT;
  // Per method, made on its first call (connect makes them again on every call): the serializers and the
  // URL, parsed.
  const perMethod = new WeakMap<DescMethod, MethodParts>();
  const chain = [...opts.interceptors].reverse();
  const partsOf = (method: DescMethodUnary): MethodParts => {
    let parts = perMethod.get(method);
    if (parts === undefined) {
      const serialization = createMethodSerializationLookup(method, undefined, undefined, {
        readMaxBytes: MAX_MESSAGE_BYTES,
        writeMaxBytes: MAX_MESSAGE_BYTES,
      });
      const url = createMethodUrl(opts.baseUrl, method);
      const target = methodTarget(url);
      parts = { url, call: ((req: UnaryRequest) => callUnary(opts.sessionManager, dialect, req, serialization, target)) as UnaryFn };
      perMethod.set(method, parts);
    }
    return parts;
  };
  return {
    stream: (...args) => streaming.stream(...args),
    async unary(method, signal, timeoutMs, header, message, contextValues) {
      const deadline = timeoutMs === undefined ? opts.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const { url, call: inner } = partsOf(method);
      // The interceptors applied for each call, as connect's applyInterceptors does (the first one outermost).
      let next = inner;
      for (const interceptor of chain) next = interceptor(next as never) as unknown as UnaryFn;
      const call = new CallSignal(signal, deadline);
      let replaced: AbortSignal | undefined;
      const req: UnaryRequest = {
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url,
        header: dialect.requestHeader(deadline, header),
        contextValues: contextValues ?? createContextValues(),
        message: isMessage(message, method.input) ? message : create(method.input, message as never),
        // Made when first read (an own enumerable property: a request an interceptor copies with a spread gets it).
        // One an interceptor sets instead is the request's signal from then on, as it was when this was data.
        get signal(): AbortSignal {
          return replaced ?? call.signal;
        },
        set signal(signal: AbortSignal) {
          replaced = signal;
          callOf.delete(req);
        },
      };
      callOf.set(req, call);
      try {
        const res = await next(req);
        call.finish(undefined);
        return res as never;
      } catch (err) {
        throw call.finish(err);
      }
    },
  };
}

/** A unary answer's message bytes (decompressed) with the headers and trailers the caller sees. */
interface AnswerBytes {
  header: Headers;
  trailer: Headers;
  data: Uint8Array;
}

/** How one protocol frames a unary call on an HTTP/2 stream. */
interface UnaryDialect {
  /** The request's headers, as connect's transport for the protocol makes them. */
  requestHeader(timeoutMs: number | undefined, header: HeadersInit | undefined): Headers;
  /** The request's body for the serialized message. */
  body(message: Uint8Array): Uint8Array;
  /**
   * The answer once its stream ended (the response's status and headers, the HTTP/2 trailers, every byte of
   * the body), checked as connect's transport for the protocol checks it; throws the call's error.
   */
  answer(status: number, header: Headers, trailer: Headers, bytes: Buffer): AnswerBytes | Promise<AnswerBytes>;
}

/** gRPC: one envelope each way, the status in the trailers (or the headers of a trailers-only answer). */
const GRPC: UnaryDialect = {
  requestHeader: (timeoutMs, header) =>
    header === undefined ? grpcHeaders(timeoutMs) : grpcRequestHeader(true, timeoutMs, header, ACCEPT_COMPRESSION, null),
  body(message) {
    const frame = new Uint8Array(5 + message.byteLength);
    new DataView(frame.buffer).setUint32(1, message.byteLength);
    frame.set(message, 5);
    return frame;
  },
  answer(status, header, trailer, bytes) {
    const { flags, data, compression } = checkedGrpcAnswer(status, header, trailer, bytes);
    if ((flags & 0b1) === 0) return { header, trailer, data };
    if (!compression) throw new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal);
    return compression.decompress(data, MAX_MESSAGE_BYTES).then((plain) => ({ header, trailer, data: plain }));
  },
};

/** What the header `user-agent` says (connect's transport's, as its request header has it). */
const USER_AGENT = grpcRequestHeader(true, undefined, undefined, [], null).get("user-agent") ?? "connect-es";
/** The compressions the client accepts, as `grpc-accept-encoding` names them. */
const ACCEPT_ENCODING = ACCEPT_COMPRESSION.map((c) => c.name).join(",");

/**
 * A gRPC request's headers, as connect's `requestHeaderWithCompression` makes them for a call without headers of
 * its own (content type, user agent, timeout, `te`, the compressions accepted), kept out of `Headers`'
 * validation until something asks more than to set them (see SendingHeaders).
 */
export function grpcHeaders(timeoutMs: number | undefined): Headers {
  const h = new SendingHeaders();
  h.set("content-type", "application/grpc+proto");
  h.set("user-agent", USER_AGENT);
  if (timeoutMs !== undefined) h.set("grpc-timeout", `${timeoutMs}m`);
  h.set("te", "trailers");
  h.set("grpc-accept-encoding", ACCEPT_ENCODING);
  return h;
}

/** Connect (binary): the message as the body each way; an error is a non-200 status with its JSON as the body. */
const CONNECT: UnaryDialect = {
  requestHeader: (timeoutMs, header) => connectRequestHeader("unary", true, timeoutMs, header, ACCEPT_COMPRESSION, null, true),
  body: (message) => message,
  async answer(status, responseHeader, _trailers, bytes) {
    const { compression, isUnaryError, unaryError } = validateConnectResponse("unary", ACCEPT_COMPRESSION, true, status, responseHeader);
    const [header, trailer] = trailerDemux(responseHeader);
    const promised = responseHeader.get("content-length");
    if (promised !== null && /^\d+$/.test(promised) && Number(promised) !== bytes.byteLength) {
      throw new ConnectError(`protocol error: promised ${promised} bytes, received ${bytes.byteLength}`, Code.InvalidArgument);
    }
    const data = compression ? await compression.decompress(bytes, MAX_MESSAGE_BYTES) : bytes;
    if (isUnaryError) throw errorFromJsonBytes(data, appendHeaders(header, trailer), unaryError);
    return { header, trailer, data };
  },
};

/** Where a call goes: its URL, that URL's origin and its path with the query. */
interface Target {
  url: string;
  origin: string;
  path: string;
}

function methodTarget(url: string): Target {
  const u = new URL(url);
  return { url, origin: u.origin, path: u.pathname + u.search };
}

type DescMethodUnary = Parameters<Transport["unary"]>[0];
type UnaryFn = (req: UnaryRequest) => Promise<UnaryResponse>;

/** A unary call's answer as its stream delivers it. */
interface UnaryAnswer<O extends DescMessage> {
  header: Headers;
  message: MessageShape<O>;
  trailer: Headers;
}

interface MethodParts {
  url: string;
  call: UnaryFn;
}

/** The reason a call's signal carries once the call is over (made once: a DOMException per call costs its stack trace). */
const CALL_ENDED = Object.assign(new Error("This operation was aborted"), { name: "AbortError" });

/**
 * A unary call's signal, as connect's runUnaryCall makes it: aborted by the caller's signal, at the deadline
 * (DEADLINE_EXCEEDED, which is then the call's error whatever the transport reports), when the call fails
 * (with its error), and when it ends, so what listens to it can let go. Its AbortController is made only when
 * something reads the request's signal (an interceptor, the caller's code): the transport itself, handed the
 * call's own request, follows the call through `aborted`, `reason` and `onAbort` instead (making, aborting with
 * an Event, listening to and letting go an AbortSignal cost a tenth of a small call's client CPU). Connect makes
 * three controllers a call, links them with listeners, and ends each call with a DOMException.
 */
class CallSignal implements AbortWatch {
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timedOut: ConnectError | undefined;
  private readonly caller: AbortSignal | undefined;
  private readonly onCallerAbort = (): void => this.abort(getAbortSignalReason(this.caller!));
  /** Whether the call's signal is aborted, and why (as the signal's `aborted` and `reason` say once it is made). */
  aborted = false;
  reason: unknown;
  /** The transport's own listener, called once when the call's signal aborts (after the signal's listeners). */
  onAbort: (() => void) | undefined;

  constructor(caller: AbortSignal | undefined, timeoutMs: number | undefined) {
    if (caller !== undefined) {
      if (caller.aborted) this.abort(getAbortSignalReason(caller));
      else {
        this.caller = caller;
        caller.addEventListener("abort", this.onCallerAbort);
      }
    }
    if (timeoutMs !== undefined) this.timer = setTimeout(() => this.abort((this.timedOut = deadlineExceeded())), timeoutMs);
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listener = this.onAbort;
    this.onAbort = undefined;
    listener?.();
  }

  /** Ends the call: its error as the caller sees it (undefined when it succeeded). */
  finish(err: unknown): ConnectError | undefined {
    clearTimeout(this.timer);
    this.caller?.removeEventListener("abort", this.onCallerAbort);
    if (err === undefined) {
      this.abort(CALL_ENDED);
      return undefined;
    }
    const e = ConnectError.from(this.timedOut ?? err);
    this.abort(e);
    return e;
  }
}

/**
 * What the transport watches to give a call up: whether it is aborted, why, and one listener of its own (set,
 * or undefined to let go), called once when it aborts.
 */
interface AbortWatch {
  readonly aborted: boolean;
  readonly reason: unknown;
  onAbort: (() => void) | undefined;
}

/** An AbortWatch over a signal an interceptor handed on in place of the call's own. */
class SignalWatch implements AbortWatch {
  private listener: (() => void) | undefined;

  constructor(private readonly signal: AbortSignal) {}

  get aborted(): boolean {
    return this.signal.aborted;
  }

  get reason(): unknown {
    return getAbortSignalReason(this.signal);
  }

  get onAbort(): (() => void) | undefined {
    return this.listener;
  }

  set onAbort(listener: (() => void) | undefined) {
    if (this.listener) this.signal.removeEventListener("abort", this.listener);
    this.listener = listener;
    if (listener) this.signal.addEventListener("abort", listener, { once: true });
  }
}

/** Each call's own request (the one the interceptors were handed) and its CallSignal. */
const callOf = new WeakMap<object, CallSignal>();

function deadlineExceeded(): ConnectError {
  return new ConnectError("the operation timed out", Code.DeadlineExceeded);
}

async function callUnary<I extends DescMessage, O extends DescMessage>(
  sm: Http2SessionManager,
  dialect: UnaryDialect,
  req: UnaryRequest<I, O>,
  serialization: MethodSerializationLookup<I, O>,
  method: Target,
) {
  // The method's URL was parsed once; one an interceptor changed is parsed here.
  const { origin, path } = req.url === method.url ? method : methodTarget(req.url);
  if (origin !== sm.authority) {
    throw new ConnectError(`cannot make a request to ${origin}: the http2 session is connected to ${sm.authority}`, Code.Internal);
  }
  // The call's own request (interceptors passed it on as it was): its CallSignal, without making its AbortSignal;
  // else the signal the request carries.
  const watch: AbortWatch = callOf.get(req) ?? new SignalWatch(req.signal);
  if (watch.aborted) throw connectErrorFromNode(watch.reason);
  const frame = dialect.body(serialization.getI(true).serialize(req.message));
  let stream: ClientHttp2Stream;
  try {
    stream = await sm.request("POST", path, nodeHeaders(req.header), {});
  } catch (err) {
    throw connectErrorFromNode(err);
  }
  // The call's outcome reaches the caller through `outcome`, let go once the call settles. The listeners below
  // outlive the call: Node's HTTP/2 stream stays reachable from its native handle until the next full
  // collection, so each young collection keeps what they reach. Through the promise's `resolve` that would be
  // the answer, every answer (~90 KB of objects and strings for 100 search results) would be copied out of
  // the young generation, and a client making calls back to back spent ~15% of its time doing that.
  let outcome: { resolve(answer: UnaryAnswer<O>): void; reject(err: ConnectError): void } | undefined;
  const answered = new Promise<UnaryAnswer<O>>((resolve, reject) => {
    outcome = { resolve, reject };
  });
  let status = 0;
  let header: Headers | undefined;
  let trailer: Headers | undefined;
  const chunks: Buffer[] = [];
  let received = 0;
  const settle = (err: ConnectError | undefined, value?: UnaryAnswer<O>) => {
    const settling = outcome;
    if (settling === undefined) return;
    outcome = undefined;
    chunks.length = 0;
    watch.onAbort = undefined;
    if (err) {
      // A stream given up is reset with CANCEL (gRPC's mapping of a cancelled call), anything else INTERNAL_ERROR.
      if (!stream.closed) stream.close(err.code === Code.Canceled ? h2.NGHTTP2_CANCEL : h2.NGHTTP2_INTERNAL_ERROR);
      settling.reject(err);
    } else settling.resolve(value!);
  };
  const onAbort = () => settle(connectErrorFromNode(watch.reason));
  watch.onAbort = onAbort;
  stream.on("response", (h: IncomingHttpHeaders) => {
    status = Number(h[":status"] ?? 0);
    header = new ReceivedHeaders(h);
  });
  stream.on("trailers", (t: IncomingHttpHeaders) => {
    trailer = new ReceivedHeaders(t);
  });
  stream.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received > MAX_MESSAGE_BYTES + 5) {
      settle(new ConnectError(`message size is larger than configured readMaxBytes ${MAX_MESSAGE_BYTES}`, Code.ResourceExhausted));
      return;
    }
    chunks.push(chunk);
    sm.notifyResponseByteRead(stream);
  });
  stream.on("error", (err: unknown) => {
    if (stream.writableEnded && nodeErrorCodes(err).includes("ERR_STREAM_WRITE_AFTER_END")) return;
    settle(connectErrorFromNode(err));
  });
  let ended = false;
  stream.on("close", () => {
    const reset = connectErrorFromReset(stream.rstCode);
    if (reset) settle(reset);
    else if (!ended) settle(new ConnectError("protocol error: the stream closed before the answer ended", Code.Internal));
  });
  stream.on("end", () => {
    ended = true;
    const bytes = Buffer.concat(chunks);
    const done = ({ header, trailer, data }: AnswerBytes) => {
      let parsed: MessageShape<O>;
      try {
        // The search answers through their own reader (the one part of a 100-result call's client CPU it
        // spends the most on), anything it leaves through connect's.
        parsed =
          ((data.byteLength <= MAX_MESSAGE_BYTES ? decodeSearchResponse(req.method.output, data) : undefined) as
            MessageShape<O> | undefined) ?? serialization.getO(true).parse(data);
      } catch (err) {
        settle(ConnectError.from(err, Code.Internal));
        return;
      }
      settle(undefined, { header, message: parsed, trailer });
    };
    let answer: AnswerBytes | Promise<AnswerBytes>;
    try {
      answer = dialect.answer(status, header ?? new Headers(), trailer ?? new Headers(), bytes);
    } catch (err) {
      settle(ConnectError.from(err));
      return;
    }
    // A thenable, not `instanceof Promise`: a promise of another realm (a test runner's sandbox) is one too.
    if ("then" in answer) answer.then(done, (err: unknown) => settle(ConnectError.from(err)));
    else done(answer);
  });
  // Aborted while the stream was being opened (a connection still connecting): given up, the request never sent.
  if (watch.aborted) onAbort();
  else stream.end(frame);
  return answered.then(({ header, message, trailer }) => ({
    stream: false as const,
    service: req.service,
    method: req.method,
    header,
    message,
    trailer,
  }));
}

/**
 * The one answer envelope of a gRPC unary call (its flags, bytes and the answer's compression), or the call's
 * error, checked as connect's gRPC transport checks them.
 */
function checkedGrpcAnswer(
  status: number,
  header: Headers,
  trailer: Headers,
  bytes: Buffer,
): { flags: number; data: Uint8Array; compression: Compression | undefined } {
  const { compression, headerError } = validateGrpcResponse(ACCEPT_COMPRESSION, status, header);
  const envelopes: Array<{ flags: number; data: Uint8Array }> = [];
  for (let at = 0; at < bytes.length;) {
    const left = bytes.length - at;
    if (left < 5) throw new ConnectError(`protocol error: incomplete envelope`, Code.InvalidArgument);
    const length = bytes.readUInt32BE(at + 1);
    if (left - 5 < length) throw new ConnectError(`protocol error: incomplete envelope`, Code.InvalidArgument);
    envelopes.push({ flags: bytes[at], data: bytes.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  if (envelopes.length > 1) throw new ConnectError("protocol error: received extra output message for unary method", Code.Unimplemented);
  validateTrailer(trailer, header);
  if (envelopes.length === 0) {
    // A trailers-only answer: the status is in the headers.
    if (headerError) throw headerError;
    throw new ConnectError(
      "protocol error: missing output message for unary method",
      trailer.has("grpc-status") ? Code.Unimplemented : Code.Unknown,
    );
  }
  if (headerError) throw new ConnectError("protocol error: received output message for unary method with error status", Code.Unknown);
  return { ...envelopes[0], compression };
}

function nodeHeaders(headers: Headers): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  if (headers instanceof SendingHeaders) return headers.writeInto(out);
  headers.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

/** The `code` of an error and of each of its causes. */
function nodeErrorCodes(err: unknown): string[] {
  const codes: string[] = [];
  // Not `instanceof Error`: an error from another realm (a VM context, a test runner's sandbox) is one too.
  for (let e: unknown = err, depth = 0; typeof e === "object" && e !== null && depth < 16; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
  }
  return codes;
}

/** A Node error as connect-node reports it (connectErrorFromNodeReason): the same codes for the same failures. */
function connectErrorFromNode(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const codes = nodeErrorCodes(err);
  let code = Code.Internal;
  if (codes.includes("ERR_STREAM_WRITE_AFTER_END")) code = Code.Aborted;
  else if (codes.some((c) => c === "ERR_STREAM_DESTROYED" || c === "ERR_HTTP2_INVALID_STREAM" || c === "ECONNRESET")) code = Code.Aborted;
  else if (codes.some((c) => c === "ETIMEDOUT" || c === "ENOTFOUND" || c === "EAI_AGAIN" || c === "ECONNREFUSED")) code = Code.Unavailable;
  const ce = ConnectError.from(err, code);
  if (ce !== err) ce.cause = err;
  return ce;
}

/** An HTTP/2 reset as connect-node reports it (connectErrorFromH2ResetCode); undefined for none (or STREAM_CLOSED). */
function connectErrorFromReset(rstCode: number | undefined): ConnectError | undefined {
  const message = () => `http/2 stream closed with error code 0x${(rstCode ?? 0).toString(16)}`;
  switch (rstCode) {
    case h2.NGHTTP2_PROTOCOL_ERROR:
    case h2.NGHTTP2_INTERNAL_ERROR:
    case h2.NGHTTP2_FLOW_CONTROL_ERROR:
    case h2.NGHTTP2_SETTINGS_TIMEOUT:
    case h2.NGHTTP2_FRAME_SIZE_ERROR:
    case h2.NGHTTP2_COMPRESSION_ERROR:
    case h2.NGHTTP2_CONNECT_ERROR:
      return new ConnectError(message(), Code.Internal);
    case h2.NGHTTP2_REFUSED_STREAM:
      return new ConnectError(message(), Code.Unavailable);
    case h2.NGHTTP2_CANCEL:
      return new ConnectError(message(), Code.Canceled);
    case h2.NGHTTP2_ENHANCE_YOUR_CALM:
      return new ConnectError(message(), Code.ResourceExhausted);
    case h2.NGHTTP2_INADEQUATE_SECURITY:
    case h2.NGHTTP2_HTTP_1_1_REQUIRED:
      return new ConnectError(message(), Code.PermissionDenied);
    default:
      return undefined;
  }
}
