import type * as http from "node:http";
import * as http2 from "node:http2";
import { Code, ConnectError, createConnectRouter, createContextValues, type ConnectRouter } from "@connectrpc/connect";
import {
  createAsyncIterable,
  type UniversalHandler,
  type UniversalServerRequest,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
  type ConnectNodeAdapterOptions,
} from "@connectrpc/connect-node";
import { BodyDeadline, type BodyDeadlineOptions } from "./body-deadline.js";
import { admitBody, type BodyAdmissionOptions } from "./body-admission.js";
import { frameOf } from "./grpc-frame.js";

type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

/** What connect-es says when a request body does not decode (it answers INTERNAL for it). */
const PARSE_BINARY = "parse binary: ";
/**
 * What connect-node says when a compressed request body does not decompress: INVALID_ARGUMENT for some
 * zlib errors (corrupt data), INTERNAL for the others (a truncated stream, a wrong header). Either way
 * the client's bytes are malformed.
 */
const DECOMPRESSION_FAILED = "decompression failed";

/**
 * The message a malformed body gets instead of connect's INTERNAL one (it names the message type and what
 * was wrong), or undefined when `internalMessage` is not about the request body.
 */
function malformedMessage(inputType: string, internalMessage: string): string | undefined {
  if (internalMessage.startsWith(PARSE_BINARY)) {
    return `the request body is not a valid ${inputType} message (${internalMessage.slice(PARSE_BINARY.length)})`;
  }
  if (internalMessage === DECOMPRESSION_FAILED) return `the request body of ${inputType} does not decompress in the encoding it names`;
  return undefined;
}

const textDecoder = new TextDecoder();
const textEncoder = new TextEncoder();

/** A Connect unary error body `{"code":"internal","message":"parse binary: ..."}`, rewritten; else undefined. */
function rewriteConnectJson(json: string, inputType: string): string | undefined {
  try {
    const parsed = JSON.parse(json) as { code?: string; message?: string; error?: { code?: string; message?: string } };
    const err = parsed.error ?? parsed;
    const message = err.code === "internal" && err.message !== undefined ? malformedMessage(inputType, err.message) : undefined;
    if (message === undefined) return undefined;
    err.code = "invalid_argument";
    err.message = message;
    return JSON.stringify(parsed);
  } catch {
    return undefined;
  }
}

/** Rewrites gRPC status headers (trailers, or a trailers-only head) that carry a body parse failure. */
function rewriteGrpcHeaders(headers: Headers, inputType: string): boolean {
  if (headers.get("grpc-status") !== String(Code.Internal)) return false;
  const raw = headers.get("grpc-message") ?? "";
  let message: string;
  try {
    message = decodeURIComponent(raw);
  } catch {
    return false;
  }
  const rewritten = malformedMessage(inputType, message);
  if (rewritten === undefined) return false;
  headers.set("grpc-status", String(Code.InvalidArgument));
  headers.set("grpc-message", encodeURIComponent(rewritten));
  headers.delete("grpc-status-details-bin");
  return true;
}

/** One enveloped chunk that is an end-of-stream frame (gRPC-Web trailers, Connect end-stream JSON), rewritten. */
function rewriteEndFrame(chunk: Uint8Array, contentType: string, inputType: string): Uint8Array {
  if (chunk.length < 5) return chunk;
  const flags = chunk[0];
  const length = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength).getUint32(1);
  if (length !== chunk.length - 5) return chunk;
  const payload = textDecoder.decode(chunk.subarray(5));
  if (contentType.startsWith("application/grpc-web") && flags === 0x80) {
    const headers = new Headers();
    for (const line of payload.split("\r\n")) {
      const i = line.indexOf(":");
      if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
    }
    if (!rewriteGrpcHeaders(headers, inputType)) return chunk;
    let text = "";
    headers.forEach((value, key) => {
      text += `${key}: ${value}\r\n`;
    });
    return frameOf(flags, textEncoder.encode(text));
  }
  if (contentType.startsWith("application/connect+") && flags === 0x02) {
    const rewritten = rewriteConnectJson(payload, inputType);
    return rewritten === undefined ? chunk : frameOf(flags, textEncoder.encode(rewritten));
  }
  return chunk;
}

/**
 * connect-es answers a request body that does not decode as protobuf, or (connect-node) a compressed one
 * that does not decompress, with INTERNAL (its JSON decoding says INVALID_ARGUMENT), before any interceptor
 * runs for unary calls: the error is rewritten here, on the way
 * out, in whichever protocol framed it (Connect unary JSON, Connect end-stream, gRPC trailers or a
 * trailers-only head, gRPC-Web trailer frame).
 */
async function malformedBodyIsInvalidArgument(res: UniversalServerResponse, inputType: string): Promise<UniversalServerResponse> {
  const header = new Headers(res.header);
  const contentType = header.get("content-type") ?? "";
  rewriteGrpcHeaders(header, inputType);
  const body = res.body;
  if (body === undefined) return { ...res, header };
  if (res.status === 500 && contentType.startsWith("application/json") && !header.has("content-encoding")) {
    // A Connect unary error: one small JSON body, read whole so the status can change with it.
    const chunks: Uint8Array[] = [];
    for await (const chunk of body instanceof Uint8Array ? [body] : body) chunks.push(chunk);
    const rewritten = rewriteConnectJson(textDecoder.decode(Buffer.concat(chunks)), inputType);
    const bytes = rewritten === undefined ? Buffer.concat(chunks) : textEncoder.encode(rewritten);
    header.set("content-length", String(bytes.byteLength));
    return { ...res, status: rewritten === undefined ? res.status : 400, header, body: createAsyncIterable([bytes]) };
  }
  if (body instanceof Uint8Array) return { ...res, header };
  const trailer = res.trailer instanceof Headers ? res.trailer : undefined;
  return {
    ...res,
    header,
    body: (async function* rewritten() {
      for await (const chunk of body) yield rewriteEndFrame(chunk, contentType, inputType);
      if (trailer) rewriteGrpcHeaders(trailer, inputType);
    })(),
  };
}

/**
 * Whether a response failed only because nobody is there to read it: the client went away (reset its stream,
 * closed the connection), or the server closed the stream first.
 */
function clientWentAway(res: NodeResponse, reason: unknown): boolean {
  const code = ConnectError.from(reason).code;
  if (code === Code.Aborted || code === Code.Canceled) return true;
  // Closed counts too: the server closes a stream whose body stalled (release), and the handler's answer then
  // finds it closed, not yet destroyed (ERR_STREAM_WRITE_AFTER_END); nobody is there to read it either way.
  const stream = (res as { stream?: http2.Http2Stream }).stream;
  return res.destroyed || stream?.destroyed === true || stream?.closed === true;
}

/** Options of createNodeHandler: connect-node's, and routes that serve some paths in the binary protocols. */
export interface NodeHandlerOptions extends ConnectNodeAdapterOptions, BodyAdmissionOptions {
  /**
   * Methods that, in the binary protocols (gRPC, gRPC-Web, Connect with protobuf), are served by these
   * routes instead of `routes`: the same method path, decoded with a wire-compatible request type (see
   * upsertDocumentsWireMethod). JSON requests on those paths stay on `routes`.
   */
  binaryRoutes?: (router: ConnectRouter) => void;
  /**
   * The largest JSON request message (Connect, gRPC-Web or gRPC with JSON), when smaller than
   * `readMaxBytes`: connect-es parses and converts a JSON message in one step on the serving thread, at
   * some 25 ms per MiB on an idle core and 160 ms per MiB under heavy load (a 3.7 MiB UpsertDocuments
   * message of 20,000 documents took 0.6 s), where the binary protocols cut a message up first (see
   * upsertDocumentsWireMethod). A larger JSON message is RESOURCE_EXHAUSTED before it is parsed.
   */
  jsonReadMaxBytes?: number;
  /**
   * A request body that receives no bytes for this long while the call waits for it is abandoned (ms): the
   * HTTP/2 stream is reset, the HTTP/1.1 connection closed. Absent: no deadline.
   */
  bodyTimeoutMs?: number;
  /**
   * A single-message body (unary, server-streaming) must average at least this many bytes/s once the server
   * has waited `bodyTimeoutMs` for it; slower is abandoned like a stall. Absent or 0: no rate rule.
   */
  minBodyBytesPerSecond?: number;
}

/** The body a refused call gets instead of its own: one empty message, framed as its content type frames one. */
function emptyBody(contentType: string | undefined): Uint8Array {
  const type = (contentType ?? "").split(";", 1)[0].trim().toLowerCase();
  const message = type.endsWith("json") ? textEncoder.encode("{}") : new Uint8Array(0);
  if (type.startsWith("application/grpc-web-text")) return textEncoder.encode(frameOf(0, message).toString("base64"));
  if (type.startsWith("application/grpc") || type.startsWith("application/connect+")) return frameOf(0, message);
  return message;
}

/** `req` with an empty message in place of its body (and no header describing the body it had). */
function withoutBody(req: UniversalServerRequest, contentType: string | undefined): UniversalServerRequest {
  const header = new Headers(req.header);
  header.delete("content-length");
  header.delete("content-encoding");
  return { ...req, header, body: createAsyncIterable([emptyBody(contentType)]) };
}

/**
 * `body`, failing (DEADLINE_EXCEEDED) and calling `abandon` when it misses a deadline of `deadline.ts`: a chunk
 * the reader waits for does not come within the stall time, or (a single-message body) it arrives under the
 * minimum rate. Only waits count: a reader that is busy (the server's own backpressure) never trips it.
 */
async function* withBodyDeadline(
  body: AsyncIterable<Uint8Array>,
  opts: BodyDeadlineOptions,
  abandon: () => void,
): AsyncIterable<Uint8Array> {
  const it = body[Symbol.asyncIterator]();
  let rejectMiss: ((err: ConnectError) => void) | undefined;
  const missed = new Promise<never>((_, reject) => (rejectMiss = reject));
  missed.catch(() => undefined);
  const deadline = new BodyDeadline(opts, (m) => {
    abandon();
    rejectMiss?.(new ConnectError(m.message, Code.DeadlineExceeded));
  });
  try {
    for (;;) {
      deadline.waiting();
      const next = await Promise.race([it.next(), missed]);
      if (next.done === true) return;
      // Counted before the chunk is handed on: the time the reader spends on it is not the client's.
      deadline.received(next.value.byteLength);
      yield next.value;
    }
  } finally {
    deadline.stop();
    void it.return?.()?.catch(() => undefined);
  }
}

function isHttp2(req: NodeRequest): req is http2.Http2ServerRequest {
  return "stream" in req;
}

/**
 * Frees what a request whose body the server does not read any more still holds. Answered (`abandon` false):
 * its HTTP/2 stream is reset with NO_ERROR once the answer is sent, which tells the client to stop sending
 * (an HTTP/1.1 connection closes after the answer: see `connection: close`). Abandoned: the stream is reset
 * (CANCEL), the HTTP/1.1 connection closed.
 */
function release(req: NodeRequest, abandon: boolean): void {
  if (isHttp2(req)) {
    const stream = req.stream;
    if (!stream.destroyed && !stream.closed) stream.close(abandon ? http2.constants.NGHTTP2_CANCEL : http2.constants.NGHTTP2_NO_ERROR);
  } else if (abandon) req.socket.destroy();
}

/** Whether a content type carries protobuf: gRPC, gRPC-Web (binary or text) and Connect with protobuf. */
function isBinaryContentType(contentType: string | undefined): boolean {
  const type = (contentType ?? "").split(";", 1)[0].trim().toLowerCase();
  return (
    /^application\/(grpc|grpc-web|grpc-web-text)(\+proto)?$/.test(type) ||
    type === "application/connect+proto" ||
    type === "application/proto"
  );
}

/**
 * The Node request handler of the server: connect-node's adapter (`connectNodeAdapter`), with a request
 * body that does not decode answered INVALID_ARGUMENT in every protocol (JSON bodies are decoded strictly
 * too: invalid UTF-8 is refused, not replaced), a client that goes away mid-call not logged as a failure,
 * `binaryRoutes` taking their paths' protobuf requests, and JSON requests held to `jsonReadMaxBytes`.
 */
export function createNodeHandler(options: NodeHandlerOptions): (req: NodeRequest, res: NodeResponse) => void {
  const routerOptions = {
    acceptCompression: [compressionGzip, compressionBrotli],
    ...options,
    jsonOptions: {
      textDecoder: new TextDecoder("utf-8", { fatal: true }),
      ...options.jsonOptions,
    } as ConnectNodeAdapterOptions["jsonOptions"],
  };
  const handlersOf = (routes: (router: ConnectRouter) => void, readMaxBytes = options.readMaxBytes): Map<string, UniversalHandler> => {
    const router = createConnectRouter({ ...routerOptions, readMaxBytes });
    routes(router);
    const paths = new Map<string, UniversalHandler>();
    for (const h of router.handlers) paths.set((options.requestPathPrefix ?? "") + h.requestPath, h);
    return paths;
  };
  const paths = handlersOf(options.routes);
  const binaryPaths = options.binaryRoutes ? handlersOf(options.binaryRoutes) : new Map<string, UniversalHandler>();
  const jsonMax = options.jsonReadMaxBytes;
  const jsonPaths =
    jsonMax !== undefined && jsonMax < (options.readMaxBytes ?? Number.MAX_SAFE_INTEGER) ? handlersOf(options.routes, jsonMax) : paths;
  return (req, res) => {
    const path = req.url?.split("?", 2)[0] ?? "";
    const isBinary = isBinaryContentType(req.headers["content-type"]);
    const binary = binaryPaths.size > 0 ? binaryPaths.get(path) : undefined;
    const handler = isBinary ? (binary ?? paths.get(path)) : jsonPaths.get(path);
    if (!handler) {
      if (options.fallback) options.fallback(req, res);
      else {
        res.writeHead(404);
        res.end();
      }
      return;
    }
    const values = options.contextValues?.(req) ?? createContextValues();
    let uReq = universalRequestFromNodeRequest(req, res, undefined, values);
    // The header as the access interceptor reads it (req.header): the same value for the same rule.
    const session = isHttp2(req) ? req.stream.session : undefined;
    const mayRead = admitBody(options, handler.service.typeName, uReq.header.get("authorization"), values, session);
    if (!mayRead) {
      uReq = withoutBody(uReq, req.headers["content-type"]);
      // HTTP/1.1 cannot tell the client to stop sending: the connection closes after the answer.
      if (!isHttp2(req)) res.setHeader("connection", "close");
    } else if (options.bodyTimeoutMs !== undefined) {
      // One request message (unary, server-streaming): the minimum rate applies too; a client stream may pause.
      const single = handler.method.methodKind === "unary" || handler.method.methodKind === "server_streaming";
      const opts: BodyDeadlineOptions = {
        stallMs: options.bodyTimeoutMs,
        graceMs: options.bodyTimeoutMs,
        minBytesPerSecond: single ? (options.minBodyBytesPerSecond ?? 0) : 0,
      };
      uReq = { ...uReq, body: withBodyDeadline(uReq.body as AsyncIterable<Uint8Array>, opts, () => release(req, true)) };
    }
    handler(uReq)
      .then((uRes) => malformedBodyIsInvalidArgument(uRes, handler.method.input.typeName))
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        if (clientWentAway(res, reason)) return;
        process.stderr.write(`acms: handler for ${handler.service.typeName}/${handler.method.name} failed: ${String(reason)}\n`);
      })
      .finally(() => {
        if (!mayRead) release(req, false);
      });
  };
}
