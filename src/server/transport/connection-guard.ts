import type http2 from "node:http2";
import type net from "node:net";

/** Connection limits of one listener. */
export interface ConnectionLimits {
  /** Most connections open at once from one peer address; more are closed as they arrive. */
  maxPerPeer: number;
  /** A connection with no call in flight and no traffic for this long is closed, in ms. */
  idleTimeoutMs: number;
  /** An HTTP/2 connection whose client has not sent its SETTINGS this long after the preface is closed, in ms. */
  handshakeTimeoutMs: number;
  /**
   * A request body that receives no bytes for this long while the server waits for it is abandoned, in ms:
   * its HTTP/2 stream is reset, its HTTP/1.1 connection closed (a stalled request is not a call in flight).
   */
  bodyTimeoutMs: number;
  /**
   * A single-message request body (unary, server-streaming) must average at least this many bytes/s once the
   * server has waited `bodyTimeoutMs` for it, else it is abandoned like a stalled one; 0 turns the rule off.
   */
  minBodyBytesPerSecond: number;
}

/** The defaults (ACMS_MAX_CONNECTIONS_PER_PEER, ACMS_IDLE_TIMEOUT_MS, ACMS_HANDSHAKE_TIMEOUT_MS, ACMS_BODY_TIMEOUT_MS, ACMS_MIN_BODY_RATE). */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxPerPeer: 256,
  idleTimeoutMs: 60_000,
  handshakeTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  minBodyBytesPerSecond: 240,
};

/**
 * Keeps connections from holding the server: a cap on concurrent connections per peer address (a peer with
 * no key could otherwise open them until the process runs out of descriptors or memory), an HTTP/2
 * handshake timeout (a client that sends the preface and then nothing), and an idle timeout for sessions
 * with no call in flight. HTTP/1.1 keep-alive has its own idle timeout (the listener sets it).
 */
export class ConnectionGuard {
  private readonly perPeer = new Map<string, number>();
  /** Connections refused because their peer was at the cap, since start. */
  refused = 0;

  constructor(readonly limits: ConnectionLimits) {}

  /** Counts a new connection against its peer; destroys it and answers false when the peer is at the cap. */
  admit(socket: net.Socket): boolean {
    const peer = socket.remoteAddress ?? "unknown";
    const open = this.perPeer.get(peer) ?? 0;
    if (open >= this.limits.maxPerPeer) {
      this.refused += 1;
      socket.destroy();
      return false;
    }
    this.perPeer.set(peer, open + 1);
    socket.once("close", () => {
      const n = (this.perPeer.get(peer) ?? 1) - 1;
      if (n <= 0) this.perPeer.delete(peer);
      else this.perPeer.set(peer, n);
    });
    return true;
  }

  /** Applies the handshake and idle timeouts to a new HTTP/2 session. */
  watch(session: http2.ServerHttp2Session): void {
    const handshake = setTimeout(() => session.destroy(), this.limits.handshakeTimeoutMs);
    session.once("remoteSettings", () => clearTimeout(handshake));
    session.once("close", () => clearTimeout(handshake));
    let streams = 0;
    const idleMs = this.limits.idleTimeoutMs;
    session.on("stream", (stream) => {
      streams += 1;
      stream.once("close", () => {
        streams -= 1;
        // The idle time counts from the last call's end: a stream reset after a stall (the body deadline)
        // leaves the connection to this timer, even when no frame arrives after it.
        if (streams === 0 && !session.destroyed) session.setTimeout(idleMs);
      });
    });
    // Not setTimeout's callback: Node registers that `once`, and the timer re-arms on every frame, so a
    // connection quiet once with a call in flight would never be checked again.
    session.on("timeout", () => {
      // Quiet but with a call in flight (a long query): not idle. The timer re-arms on the next frame.
      if (streams === 0) session.close();
    });
    session.setTimeout(idleMs);
  }
}
