import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { routeByPreface } from "../../src/server/transport/route-by-preface.js";

/** A listening round-robin proxy: where clients connect, and how to stop it. */
export interface RoundRobinProxy {
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** Requests and streams sent to each upstream so far, in the order of `upstreams`. */
  readonly sent: readonly number[];
  /** Stops accepting and drops every connection, downstream and upstream. */
  close(): Promise<void>;
}

const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR, NGHTTP2_NO_ERROR, NGHTTP2_FLAG_END_STREAM } = http2.constants;
/** HTTP/1.1 headers about one hop only: each side of the proxy has its own connection. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

/** The string-keyed headers of a received header block, ready to send on (node adds a symbol key). */
function plainHeaders(h: http2.IncomingHttpHeaders): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * A reverse proxy on 127.0.0.1 that sends each request, or each HTTP/2 stream, to the next of `upstreams`
 * in turn: per request, not per connection, so a client that keeps one HTTP/2 connection (grpc-js, Connect
 * on HTTP/2, Go, Python) still has its calls answered by every upstream one after another. Why: the
 * outside client suites run through it against two server replicas on one database, and the point is that
 * a write acknowledged by one replica is seen by the next call, answered by the other.
 *
 * Like the server's own listener it takes h2c and HTTP/1.1 on one port (the first bytes pick): HTTP/2
 * streams go on over one HTTP/2 connection per upstream, headers, data and trailers as received (a
 * trailers-only gRPC answer stays trailers-only), RST_STREAM both ways (a client's cancellation reaches the
 * server's handler); HTTP/1.1 requests (Connect and gRPC-Web from Chromium) go on over HTTP/1.1
 * keep-alive connections. No maintained npm proxy does HTTP/2 upstream with trailers (http2-proxy and
 * http-proxy speak HTTP/1.1 upstream), hence this small one on node:http2.
 * @example const proxy = await startRoundRobinProxy([a.url, b.url]); // clients use proxy.url
 */
export async function startRoundRobinProxy(upstreams: readonly string[]): Promise<RoundRobinProxy> {
  if (upstreams.length === 0) throw new Error("a proxy needs at least one upstream");
  const targets = upstreams.map((u) => new URL(u));
  const sent = targets.map(() => 0);
  let turn = 0;
  const next = (): number => {
    const i = turn;
    turn = (turn + 1) % targets.length;
    sent[i] += 1;
    return i;
  };

  const upstreamSessions: Array<http2.ClientHttp2Session | undefined> = targets.map(() => undefined);
  const sessionTo = (i: number): http2.ClientHttp2Session => {
    const existing = upstreamSessions[i];
    if (existing && !existing.closed && !existing.destroyed) return existing;
    const s = http2.connect(targets[i].origin);
    // A failed or closed upstream connection fails its streams (handled per stream); the next stream reconnects.
    s.on("error", () => undefined);
    s.on("close", () => {
      if (upstreamSessions[i] === s) upstreamSessions[i] = undefined;
    });
    upstreamSessions[i] = s;
    return s;
  };
  const agents = targets.map(() => new http.Agent({ keepAlive: true }));

  const h2 = http2.createServer({ maxSessionMemory: 64 });
  h2.on("stream", (stream, headers) => forwardStream(stream, headers, sessionTo(next())));
  const h1 = http.createServer((req, res) => {
    const i = next();
    forwardRequest(req, res, targets[i], agents[i]);
  });

  const sockets = new Set<net.Socket>();
  const downstreamSessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (s) => {
    downstreamSessions.add(s);
    s.on("close", () => downstreamSessions.delete(s));
  });
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.setNoDelay(true);
    routeByPreface(socket, h1, h2);
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (tcp.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    sent,
    async close() {
      const stopped = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const s of downstreamSessions) s.destroy();
      for (const s of sockets) s.destroy();
      for (const s of upstreamSessions) s?.destroy();
      for (const a of agents) a.destroy();
      h1.close();
      await stopped;
    },
  };
}

/**
 * One HTTP/2 stream on to `session`: the request's headers and body as sent, then the answer's headers,
 * data and trailers back; a reset on either side resets the other with the same code.
 */
function forwardStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, session: http2.ClientHttp2Session): void {
  let up: http2.ClientHttp2Stream;
  try {
    up = session.request(plainHeaders(headers));
  } catch {
    stream.close(NGHTTP2_INTERNAL_ERROR);
    return;
  }
  let trailers: http2.OutgoingHttpHeaders = {};
  stream.on("error", () => undefined);
  up.on("error", () => undefined);
  stream.pipe(up);
  up.on("response", (h, flags) => {
    if (stream.closed || stream.destroyed) return;
    // gRPC's trailers-only answer (the status in the one header block) must stay one block ending the stream.
    if (flags & NGHTTP2_FLAG_END_STREAM) {
      stream.respond(plainHeaders(h), { endStream: true });
      return;
    }
    stream.respond(plainHeaders(h), { waitForTrailers: true });
    up.pipe(stream);
  });
  up.on("trailers", (t) => {
    trailers = plainHeaders(t);
  });
  // With no trailers received this sends none (node ends the stream with an empty DATA frame).
  stream.on("wantTrailers", () => stream.sendTrailers(trailers));
  up.on("close", () => {
    if (stream.closed || stream.destroyed) return;
    if (up.rstCode !== undefined && up.rstCode !== NGHTTP2_NO_ERROR) stream.close(up.rstCode);
    else if (!stream.headersSent) stream.close(NGHTTP2_INTERNAL_ERROR);
  });
  stream.on("close", () => {
    // Done both ways already (the answer relayed in full): nothing to cancel.
    if (up.closed || up.destroyed || (up.readableEnded && up.writableEnded)) return;
    // The client reset the stream (a cancelled call) or went away: the server's handler sees the cancellation.
    up.close(stream.rstCode !== undefined && stream.rstCode !== NGHTTP2_NO_ERROR ? stream.rstCode : NGHTTP2_CANCEL);
  });
}

/** One HTTP/1.1 request on to `target` over `agent`, and its answer back (trailers included). */
function forwardRequest(req: http.IncomingMessage, res: http.ServerResponse, target: URL, agent: http.Agent): void {
  const headers: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
  const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent });
  up.on("response", (answer) => {
    const back: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) back[k] = v;
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, back);
    res.flushHeaders();
    answer.pipe(res, { end: false });
    answer.on("end", () => {
      if (Object.keys(answer.trailers).length > 0) res.addTrailers(answer.trailers);
      res.end();
    });
    answer.on("error", () => res.destroy());
  });
  up.on("error", () => {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
  });
  req.pipe(up);
  // The client went away before the answer was complete: so does the request to the server.
  res.on("close", () => {
    if (!res.writableFinished) up.destroy();
  });
}
