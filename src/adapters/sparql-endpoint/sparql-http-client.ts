import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { AcmsError, DeadlineExceededError, InvalidArgumentError, UnavailableError } from "../../domain/errors.js";
import { EndpointAuth } from "./digest-auth.js";

/** Options of the HTTP side of the SPARQL endpoint adapter. */
export interface SparqlHttpClientOptions {
  /** The user and password the endpoint asks for (digest or basic); none: anonymous requests. */
  user?: string;
  password?: string;
  /** Connections kept open to the endpoint, at most (queries beyond it wait for a free one). */
  maxSockets: number;
}

/** One request: a form-encoded POST (SPARQL 1.1 Protocol, query or update via POST). */
export interface SparqlRequest {
  url: URL;
  body: string;
  accept: string;
  /** "query" errors answer INVALID_ARGUMENT on the query field; "update" errors on the triples field. */
  kind: "query" | "update";
  /** Absolute time (ms since the epoch) the request must have answered by: DEADLINE_EXCEEDED after. */
  deadline: number;
  /** The caller's cancellation. */
  signal?: AbortSignal;
}

/** A response whose body the caller streams; `done()` releases it (destroying it when unread). */
export interface SparqlResponse {
  message: IncomingMessage;
  /** Stops reading: the rest of the body is discarded and the request torn down. */
  stop(): void;
  /** Rejects what reading the body may throw (a deadline or cancellation during the read). */
  failure(err: unknown): Error;
  /** Clears the request's timer and abort listener. */
  done(): void;
}

/**
 * The largest response head accepted. Virtuoso echoes every dataset graph back as an
 * `X-SPARQL-default-graph` / `X-SPARQL-named-graph` header, so a scope of a thousand graphs makes a
 * head of about 100 KB, past Node's 16 KB default.
 */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

/** The address of an endpoint without user information, for messages. */
export function endpointName(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function firstLine(text: string): string {
  const cut = text.split(/\n\s*\nSPARQL query:/)[0] ?? text;
  return cut.replace(/\s+/g, " ").trim().slice(0, 500);
}

/**
 * The endpoint's refusal as a domain error: a SPARQL compiler or syntax error (Virtuoso's SQL states
 * 37000 and 42xxx, or a 400) is INVALID_ARGUMENT with the endpoint's own message, a server-side time
 * limit (S1T00, S1TAT) DEADLINE_EXCEEDED, bad credentials and everything else UNAVAILABLE. S0022 ("No
 * column") is a query Virtuoso cannot compile (a duration literal in it), so INVALID_ARGUMENT too.
 */
function refusal(status: number, text: string, kind: "query" | "update", where: string): Error {
  const message = firstLine(text) || `HTTP ${status}`;
  if (/\bS1T00\b|\bS1TAT\b|time.?out/i.test(message) && status >= 500) {
    return new DeadlineExceededError(`the SPARQL endpoint stopped the query at its time limit: ${message}`);
  }
  if (status === 401 || status === 403) {
    return new UnavailableError(
      `the SPARQL endpoint ${where} refused the service's credentials (HTTP ${status}): check ACMS_SPARQL_USER and ACMS_SPARQL_PASSWORD`,
    );
  }
  if (status === 400 || /^Virtuoso (37000|42\d{3}|22\d{3}|S0022)\b/.test(message)) {
    return InvalidArgumentError.field(kind === "query" ? "query" : "triples", `the SPARQL endpoint refused it: ${message}`);
  }
  return new UnavailableError(`the SPARQL endpoint ${where} failed (HTTP ${status}): ${message}`);
}

async function readText(message: IncomingMessage, max = 64 * 1024): Promise<string> {
  message.setEncoding("utf8");
  let text = "";
  for await (const chunk of message) {
    if (text.length < max) text += chunk as string;
  }
  return text;
}

/**
 * The HTTP client of one endpoint: keep-alive connections in a bounded pool (so a slow query holds one
 * connection, not the service), form-encoded POSTs, digest or basic authentication answered from the
 * endpoint's challenge, and every request bounded by its deadline and the caller's AbortSignal, which
 * tear the connection down (the endpoint sees the client leave).
 */
export class SparqlHttpClient {
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly auth?: EndpointAuth;

  constructor(opts: SparqlHttpClientOptions) {
    const agentOptions = { keepAlive: true, maxSockets: opts.maxSockets, maxFreeSockets: opts.maxSockets, scheduling: "lifo" as const };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
    if (opts.user !== undefined && opts.user !== "") this.auth = new EndpointAuth(opts.user, opts.password ?? "");
  }

  /** Sends `req`; resolves with a 2xx response to stream, or rejects with a domain error. */
  async send(req: SparqlRequest): Promise<SparqlResponse> {
    const where = endpointName(req.url);
    const ac = new AbortController();
    let cause: Error | undefined;
    const abort = (err: Error) => {
      if (cause) return;
      cause = err;
      ac.abort(err);
    };
    const remaining = req.deadline - Date.now();
    const timer = setTimeout(() => abort(new DeadlineExceededError("the graph query ran past its time limit")), Math.max(0, remaining));
    const onAbort = () =>
      abort(req.signal?.reason instanceof Error ? req.signal.reason : new UnavailableError("the graph query was cancelled"));
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onAbort);
    };
    const failure = (err: unknown): Error => {
      if (cause) return cause;
      const code = (err as NodeJS.ErrnoException).code;
      return new UnavailableError(`the SPARQL endpoint ${where} is unreachable${code ? ` (${code})` : ""}`);
    };
    try {
      let message = await this.attempt(req, ac.signal);
      if (message.statusCode === 401 && this.auth) {
        const challenge = message.headers["www-authenticate"];
        await readText(message);
        if (this.auth.accept(challenge)) message = await this.attempt(req, ac.signal);
      }
      const status = message.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        const text = await readText(message);
        throw refusal(status, text, req.kind, where);
      }
      const sqlState = message.headers["x-sql-state"];
      if (typeof sqlState === "string" && /^S1T/.test(sqlState)) {
        message.destroy();
        throw new DeadlineExceededError("the SPARQL endpoint stopped the query at its time limit");
      }
      return {
        message,
        stop: () => message.destroy(),
        failure,
        done,
      };
    } catch (err) {
      done();
      if (err instanceof AcmsError) throw err;
      throw failure(err);
    }
  }

  /** Closes every kept-alive connection. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /**
   * One request; a kept-alive connection the endpoint closed while idle (the request then fails on a
   * reused socket before any answer) is retried once on a fresh one.
   */
  private async attempt(req: SparqlRequest, signal: AbortSignal): Promise<IncomingMessage> {
    try {
      return await this.attemptOnce(req, signal);
    } catch (err) {
      if (!(err as { reusedSocket?: boolean }).reusedSocket || signal.aborted) throw err;
      return this.attemptOnce(req, signal);
    }
  }

  private attemptOnce(req: SparqlRequest, signal: AbortSignal): Promise<IncomingMessage> {
    const isHttps = req.url.protocol === "https:";
    const path = `${req.url.pathname}${req.url.search}`;
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded; charset=utf-8",
      "content-length": String(Buffer.byteLength(req.body, "utf8")),
      accept: req.accept,
    };
    const authorization = this.auth?.header("POST", path);
    if (authorization) headers.authorization = authorization;
    return new Promise((resolve, reject) => {
      const request = (isHttps ? https : http).request(
        {
          protocol: req.url.protocol,
          hostname: req.url.hostname.replace(/^\[|\]$/g, ""),
          port: req.url.port || (isHttps ? 443 : 80),
          path,
          method: "POST",
          headers,
          agent: isHttps ? this.agents.https : this.agents.http,
          signal,
          maxHeaderSize: MAX_HEADER_BYTES,
        },
        resolve,
      );
      request.on("error", (err: Error) => {
        const code = (err as NodeJS.ErrnoException).code;
        if (request.reusedSocket && (code === "ECONNRESET" || code === "EPIPE")) Object.assign(err, { reusedSocket: true });
        reject(err);
      });
      request.end(req.body);
    });
  }
}
