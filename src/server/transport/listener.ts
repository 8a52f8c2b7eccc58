import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { routeByPreface } from "./route-by-preface.js";
import { ConnectionGuard, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "./connection-guard.js";

/** Takes an HTTP/2 stream before the request handler sees it; false passes it on (see createGrpcStreamHandler). */
export type StreamHandler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => boolean;

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

/** A listening server and how to stop it gracefully. */
export interface Listener {
  readonly port: number;
  readonly host: string;
  /** Stops accepting, lets in-flight calls finish (up to `graceMs`), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/**
 * How long a new connection may take to send the bytes that pick its protocol. Until then neither HTTP
 * server owns the socket, so none of their timeouts apply: without this bound a client could hold
 * connections open forever by sending nothing, or half an HTTP/2 preface.
 */
export const PROTOCOL_SNIFF_TIMEOUT_MS = 10_000;

/**
 * One TCP port that speaks h2c (gRPC, gRPC-Web, Connect over HTTP/2 with prior knowledge) and HTTP/1.1
 * (Connect and gRPC-Web from browsers and plain curl): the first bytes of a connection pick the protocol.
 */
export async function listen(
  handler: Handler,
  host: string,
  port: number,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
  streamHandler?: StreamHandler,
): Promise<Listener> {
  const guard = new ConnectionGuard(limits);
  const h2 = http2.createServer(
    { maxSessionMemory: 64 },
    handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  );
  if (streamHandler) takeStreamsFirst(h2, streamHandler);
  const h1 = http.createServer(handler as (req: http.IncomingMessage, res: http.ServerResponse) => void);
  h1.keepAliveTimeout = Math.min(5000, limits.idleTimeoutMs);
  // h1 never listens itself (connections are handed to it), so start what `listen` would: connection
  // tracking, which closeIdleConnections and the headers/request timeouts depend on.
  h1.emit("listening");
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (s) => {
    guard.watch(s);
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  const sockets = new Set<net.Socket>();
  let closing = false;

  const tcp = net.createServer((socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    if (!guard.admit(socket)) return;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    const sniffTimer = setTimeout(() => socket.destroy(), PROTOCOL_SNIFF_TIMEOUT_MS);
    socket.on("close", () => clearTimeout(sniffTimer));
    routeByPreface(socket, h1, h2, () => clearTimeout(sniffTimer));
  });
  tcp.maxConnections = 10000;

  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, host, () => {
      tcp.off("error", reject);
      resolve();
    });
  });
  const address = tcp.address() as net.AddressInfo;

  return {
    port: address.port,
    host,
    async close(graceMs = 10000) {
      closing = true;
      const stopped = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const s of sessions) s.close();
      // Stops h1's connection checks and closes its idle keep-alive connections (it was never listening).
      h1.close(() => undefined);
      let poll: NodeJS.Timeout | undefined;
      let timer: NodeJS.Timeout | undefined;
      const drained = new Promise<void>((resolve) => {
        poll = setInterval(() => {
          h1.closeIdleConnections();
          if (sessions.size === 0 && sockets.size === 0) resolve();
        }, 20);
      });
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([drained, timeout]);
      clearInterval(poll);
      clearTimeout(timer);
      for (const s of sessions) s.destroy();
      for (const sock of sockets) sock.destroy();
      await stopped;
    },
  };
}

/**
 * Puts `streamHandler` in front of the compatibility layer that turns each HTTP/2 stream into a
 * request/response pair for `handler`: streams it takes never reach that layer.
 */
function takeStreamsFirst(h2: http2.Http2Server, streamHandler: StreamHandler): void {
  const compat = h2.listeners("stream") as Array<(...args: unknown[]) => void>;
  h2.removeAllListeners("stream");
  h2.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
    if (streamHandler(stream, headers)) return;
    for (const listener of compat) listener.call(h2, stream, headers, ...rest);
  });
}
