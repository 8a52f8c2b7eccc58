import type http from "node:http";
import type http2 from "node:http2";
import type { Transport } from "@connectrpc/connect";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { KeyRing } from "../../application/access/key-ring.js";
import { UnauthenticatedError } from "../../domain/errors.js";
import { createAcmsMcpServer, ScopeLineage, type McpCallContext, type ToolExtra } from "../../mcp/index.js";
import { authenticate } from "../access/access-check.js";
import { BodyDeadline } from "../transport/body-deadline.js";
import type { QuotaLedger, QuotaRefusal } from "../quotas/quota-ledger.js";
import { includePathsValues } from "./in-process-transport.js";
import { RequestMultiplexer, type JsonRpcAnswer } from "./request-multiplexer.js";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
type Handler = (req: Request, res: Response) => void;

/** Where MCP is served, on the RPC port. */
export const MCP_PATH = "/mcp";

/** The implementation version the MCP handshake reports. */
const SERVER_VERSION = "0.1.0";

/** What the endpoint needs. */
export interface McpEndpointDeps {
  /** The key ring of the RPCs: the same key is checked here (401) and again by the RPC each tool runs. */
  keys: KeyRing;
  /** Where tools send their RPCs: the server's own router and interceptors, in process (see `inProcessTransport`). */
  transport: Transport;
  /** The largest request body (a JSON-RPC message or batch) read, in bytes. */
  maxBodyBytes: number;
  /** A body that stalls this long (ms) is abandoned; past it, it must also average `minBodyBytesPerSecond`. */
  bodyTimeoutMs?: number;
  /** The minimum average rate of a body once `bodyTimeoutMs` was waited (bytes/s; ACMS_MIN_BODY_RATE); 0 or absent: none. */
  minBodyBytesPerSecond?: number;
  /**
   * The per-principal quotas the RPCs spend (the same ledger): each JSON-RPC message is admitted as one call
   * (held in flight until answered), and the RPCs a tool makes run under that admission. Absent: none.
   */
  quotas?: QuotaLedger;
}

/** The JSON-RPC error code of a request refused over quota (a server error code; `data.code` is RESOURCE_EXHAUSTED). */
export const QUOTA_EXCEEDED = -32004;

/** What a message refused over quota is answered: a tools/call gets a tool result (`isError`), like any failed call. */
function quotaAnswer(request: JSONRPCRequest, refusal: QuotaRefusal): JsonRpcAnswer {
  const message = `Over quota: ${refusal.reason}; retry in ${refusal.retryAfterMs} ms`;
  const data = { code: "RESOURCE_EXHAUSTED", message, retry_after_ms: refusal.retryAfterMs };
  if (request.method === "tools/call") {
    return {
      jsonrpc: "2.0",
      id: request.id,
      result: { content: [{ type: "text", text: `RESOURCE_EXHAUSTED: ${message}` }], structuredContent: data, isError: true },
    };
  }
  return { jsonrpc: "2.0", id: request.id, error: { code: QUOTA_EXCEEDED, message, data } };
}

/** An HTTP 429 for a request refused over quota as a whole (every message, or one that could not be read). */
function sendOverQuota(res: Response, refusal: QuotaRefusal, body?: string): void {
  const text =
    body ??
    JSON.stringify({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: QUOTA_EXCEEDED,
        message: `Over quota: ${refusal.reason}; retry in ${refusal.retryAfterMs} ms`,
        data: { code: "RESOURCE_EXHAUSTED", retry_after_ms: refusal.retryAfterMs },
      },
    });
  res.writeHead(429, {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
    "Cache-Control": "no-store",
    "Retry-After": String(Math.max(1, Math.ceil(refusal.retryAfterMs / 1000))),
  });
  res.end(text);
}

function headerOf(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A JSON-RPC error answered before the MCP server sees the request (auth, scope, size, parse). */
function sendRpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  id: unknown = null,
  extra: Record<string, string> = {},
): void {
  const body = JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
  // HTTP/2 has no connection header (its stream ends instead); HTTP/1.1 closes after a body left unread.
  if ("stream" in res) delete extra.Connection;
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    "Cache-Control": "no-store",
    ...extra,
  });
  res.end(body);
}

/**
 * The body of `req`, or undefined when it is over `max` bytes or misses a body deadline (no bytes for
 * `bodyTimeoutMs`, or under `minBodyBytesPerSecond` on average once that long was waited: the RPCs' rule,
 * BodyDeadline); the answer is then sent already and the exchange abandoned.
 */
function readBody(req: Request, res: Response, deps: McpEndpointDeps): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (body: Buffer | undefined) => {
      if (done) return;
      done = true;
      deadline?.stop();
      req.removeAllListeners("data");
      resolve(body);
    };
    const deadline =
      deps.bodyTimeoutMs === undefined
        ? undefined
        : new BodyDeadline(
            { stallMs: deps.bodyTimeoutMs, graceMs: deps.bodyTimeoutMs, minBytesPerSecond: deps.minBodyBytesPerSecond ?? 0 },
            (miss) => {
              sendRpcError(res, 408, -32600, miss.message, null, { Connection: "close" });
              finish(undefined);
              req.destroy();
            },
          );
    deadline?.waiting();
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      deadline?.received(chunk.length);
      size += chunk.length;
      if (size > deps.maxBodyBytes) {
        sendRpcError(res, 413, -32600, `the request body is over ${deps.maxBodyBytes} bytes`, null, { Connection: "close" });
        finish(undefined);
        return;
      }
      chunks.push(chunk);
      deadline?.waiting();
    });
    req.once("end", () => finish(Buffer.concat(chunks)));
    req.once("error", () => finish(undefined));
  });
}

/** The id of a single JSON-RPC request, so an early error answers it; null for batches and notifications. */
function idOf(message: unknown): unknown {
  return message && typeof message === "object" && !Array.isArray(message) && "id" in message ? (message as { id: unknown }).id : null;
}

/** The caller's context of a request, as serve() hands it in the request's auth info. */
function contextOf(extra: ToolExtra): McpCallContext {
  const ctx = extra.authInfo?.extra?.acms as McpCallContext | undefined;
  if (!ctx) throw new Error("an MCP request reached the server without its caller's context");
  return ctx;
}

/**
 * Wraps the RPC handler so that `/mcp` speaks MCP over Streamable HTTP, statelessly: each POST is answered
 * with JSON (no session id, no SSE stream) by one long-lived MCP server that keeps nothing of a caller (see
 * RequestMultiplexer). The key is checked first, from the header, as for every RPC (none or unknown: 401, the
 * body never read); `acms-scope` fixes the scope the tools run under (missing: a JSON-RPC error, HTTP 400).
 * Every tool then runs as its RPC through `deps.transport`, with the caller's `authorization`, scope and
 * `traceparent` as headers: the same access checks, quotas, audit log and metrics as any call (docs/mcp.md).
 * GET (an SSE stream) and DELETE (a session's end) have nothing to serve here: 405.
 * @example listen(withMcp(handler, { keys, transport: inProcessTransport(routes, interceptors), maxBodyBytes }), host, port)
 */
export function withMcp(handler: Handler, deps: McpEndpointDeps): Handler {
  const mux = new RequestMultiplexer();
  const server = createAcmsMcpServer(contextOf, new ScopeLineage(), SERVER_VERSION);
  const connected = server.connect(mux);
  return (req, res) => {
    const pathname = (req.url ?? "/").split("?", 1)[0];
    if (pathname !== MCP_PATH) {
      handler(req, res);
      return;
    }
    void connected
      .then(() => serve(req, res, deps, mux))
      .catch((err: unknown) => {
        if (!res.headersSent)
          sendRpcError(res, 500, -32603, `internal error: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
        else res.end();
      });
  };
}

async function serve(req: Request, res: Response, deps: McpEndpointDeps, mux: RequestMultiplexer): Promise<void> {
  if (req.method !== "POST") {
    res.setHeader("Allow", "POST");
    sendRpcError(res, 405, -32000, "this MCP endpoint is stateless: POST JSON-RPC messages (no SSE stream, no session to end)", null, {
      Connection: "close",
    });
    return;
  }
  const authorization = headerOf(req, "authorization");
  let principal: string;
  try {
    principal = authenticate(deps.keys, authorization ?? null).name;
  } catch (err) {
    if (!(err instanceof UnauthenticatedError)) throw err;
    sendRpcError(res, 401, -32001, err.message, null, { "WWW-Authenticate": 'Bearer realm="acms"', Connection: "close" });
    return;
  }
  const raw = await readBody(req, res, deps);
  if (raw === undefined) return;
  // A request answered with an error before any message runs still spends one call of the quota.
  const overQuota = (): boolean => {
    const admitted = deps.quotas?.admit(principal);
    if (admitted === undefined) return false;
    if ("reason" in admitted) {
      sendOverQuota(res, admitted as QuotaRefusal);
      return true;
    }
    admitted.release();
    return false;
  };
  let message: unknown;
  try {
    message = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch (err) {
    if (overQuota()) return;
    sendRpcError(res, 400, -32700, `Parse error: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  const scopeId = (headerOf(req, "acms-scope") ?? "").trim();
  if (scopeId === "") {
    if (overQuota()) return;
    sendRpcError(
      res,
      400,
      -32600,
      "the acms-scope header is missing: every MCP call runs under a scope (make one with ResolveScope or `acms scope resolve`)",
      idOf(message),
    );
    return;
  }
  const messages = Array.isArray(message) ? message : [message];
  if (messages.length === 0 || messages.some((m) => !isJSONRPCRequest(m) && !isJSONRPCNotification(m))) {
    if (overQuota()) return;
    sendRpcError(res, 400, -32600, "Invalid Request: expected JSON-RPC 2.0 requests or notifications", idOf(message));
    return;
  }
  const ctx: McpCallContext = {
    transport: deps.transport,
    authorization: authorization ?? "",
    scopeId,
    traceparent: headerOf(req, "traceparent"),
    narrowPaths: includePathsValues,
  };
  const authInfo: AuthInfo = { token: "", clientId: principal, scopes: [scopeId], extra: { acms: ctx } };
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  const answers: Promise<JsonRpcAnswer>[] = [];
  // Every message is one call of the principal's quotas, held in flight until it is answered.
  let refusal: QuotaRefusal | undefined;
  let refused = 0;
  for (const m of messages as JSONRPCMessage[]) {
    const admitted = deps.quotas?.admit(principal) ?? { release: () => undefined };
    if ("reason" in admitted) {
      refused++;
      if (!refusal || admitted.retryAfterMs > refusal.retryAfterMs) refusal = admitted as QuotaRefusal;
      if (isJSONRPCRequest(m)) answers.push(Promise.resolve(quotaAnswer(m, admitted as QuotaRefusal)));
      continue;
    }
    if (isJSONRPCRequest(m)) answers.push(mux.request(m, authInfo, abort.signal).finally(admitted.release));
    else {
      mux.notify(m as JSONRPCNotification, authInfo);
      admitted.release();
    }
  }
  if (answers.length === 0) {
    if (refusal) {
      sendOverQuota(res, refusal);
      return;
    }
    res.writeHead(202, { "Cache-Control": "no-store", "Content-Length": "0" });
    res.end();
    return;
  }
  const settled = await Promise.all(answers);
  if (abort.signal.aborted) return;
  const body = JSON.stringify(Array.isArray(message) ? settled : settled[0]);
  // Refused as a whole (every message over quota, none a tool call answered with a tool result): HTTP 429.
  if (refusal && refused === messages.length && settled.every((a) => "error" in a)) {
    sendOverQuota(res, refusal, body);
    return;
  }
  res.writeHead(200, {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    "Cache-Control": "no-store",
  });
  res.end(body);
}
