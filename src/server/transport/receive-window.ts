import type http2 from "node:http2";

/**
 * The HTTP/2 receive window a connection gets once a call on it has proved a valid key: 1 MiB for each stream
 * and for the connection (HTTP/2's default, and every connection's until then, is 64 KiB). At 64 KiB a client
 * streaming an upload sends a few messages and waits for the server's WINDOW_UPDATE, which the serving thread
 * sends only between its other work: uploads over gRPC ran 8-20% faster at 1 MiB (issue 29,
 * docs/benchmarks.md). A connection that has shown no key keeps 64 KiB, so a body the server refuses unread
 * (see createBodyGate) holds at most that much of the server's memory a connection.
 */
export const HTTP2_TRUSTED_RECEIVE_WINDOW_BYTES = 1024 * 1024;

const widened = new WeakSet<http2.Http2Session>();

/**
 * Opens `session`'s receive window to HTTP2_TRUSTED_RECEIVE_WINDOW_BYTES, once: the connection's own window,
 * and each stream's through the connection's settings (which, by HTTP/2's rules, widen its open streams too,
 * the call's own included).
 */
export function widenReceiveWindow(session: http2.Http2Session | undefined): void {
  if (session === undefined || widened.has(session)) return;
  widened.add(session);
  if (session.destroyed || session.closed) return;
  session.setLocalWindowSize(HTTP2_TRUSTED_RECEIVE_WINDOW_BYTES);
  session.settings({ initialWindowSize: HTTP2_TRUSTED_RECEIVE_WINDOW_BYTES });
}
