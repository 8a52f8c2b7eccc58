import type { ClientHttp2Stream, Http2Session } from "node:http2";
import { Http2SessionManager } from "@connectrpc/connect-node";

/**
 * The client's HTTP/2 receive window, of each stream and of its connection (1 MiB; HTTP/2's default is
 * 64 KiB). A search's answer of 100 chunks is ~45 KiB: at 64 KiB a few answers in a row fill the connection's
 * window and the server waits for this process's WINDOW_UPDATE, sent only between its other work. At 1 MiB
 * searches of 100 results were ~10% faster (issue 29, docs/benchmarks.md).
 */
export const CLIENT_RECEIVE_WINDOW_BYTES = 1024 * 1024;

/**
 * connect-node's HTTP/2 session manager (one connection, reopened when it fails) whose connections advertise a
 * 1 MiB receive window (CLIENT_RECEIVE_WINDOW_BYTES): each stream's in the connection's settings, and the
 * connection's own, set once on each connection before its first request is sent.
 */
export class WideWindowSessionManager extends Http2SessionManager {
  private readonly widened = new WeakSet<Http2Session>();

  constructor(url: string) {
    super(url, undefined, { settings: { initialWindowSize: CLIENT_RECEIVE_WINDOW_BYTES } });
  }

  override async request(...args: Parameters<Http2SessionManager["request"]>): Promise<ClientHttp2Stream> {
    const stream = await super.request(...args);
    const session = stream.session;
    if (session !== undefined && !this.widened.has(session)) {
      this.widened.add(session);
      if (!session.destroyed) session.setLocalWindowSize(CLIENT_RECEIVE_WINDOW_BYTES);
    }
    return stream;
  }
}
