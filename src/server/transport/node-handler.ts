import type * as http from "node:http";
import type * as http2 from "node:http2";
import { Code, ConnectError, createConnectRouter, type ConnectRouter } from "@connectrpc/connect";
import { createAsyncIterable, type UniversalHandler, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
  type ConnectNodeAdapterOptions,
} from "@connectrpc/connect-node";

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

function envelope(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
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
    return envelope(flags, textEncoder.encode(text));
  }
  if (contentType.startsWith("application/connect+") && flags === 0x02) {
    const rewritten = rewriteConnectJson(payload, inputType);
    return rewritten === undefined ? chunk : envelope(flags, textEncoder.encode(rewritten));
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

/** Whether a response failed only because the client went away (reset its stream, closed the connection). */
function clientWentAway(res: NodeResponse, reason: unknown): boolean {
  const code = ConnectError.from(reason).code;
  if (code === Code.Aborted || code === Code.Canceled) return true;
  return res.destroyed || (res as { stream?: http2.Http2Stream }).stream?.destroyed === true;
}

/** Options of createNodeHandler: connect-node's, and routes that serve some paths in the binary protocols. */
export interface NodeHandlerOptions extends ConnectNodeAdapterOptions {
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
    const uReq = universalRequestFromNodeRequest(req, res, undefined, options.contextValues?.(req));
    handler(uReq)
      .then((uRes) => malformedBodyIsInvalidArgument(uRes, handler.method.input.typeName))
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        if (clientWentAway(res, reason)) return;
        process.stderr.write(`acms: handler for ${handler.service.typeName}/${handler.method.name} failed: ${String(reason)}\n`);
      });
  };
}
