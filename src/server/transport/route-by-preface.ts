import type http from "node:http";
import type http2 from "node:http2";
import type net from "node:net";

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * Hands a fresh TCP connection to the HTTP/2 server when its first bytes are the HTTP/2 client preface (h2c
 * with prior knowledge, as gRPC clients speak) and to the HTTP/1.1 server otherwise, so one port serves both.
 * Bytes are buffered only until they decide it; `onRouted` runs once they have (e.g. to clear a sniff timer).
 */
export function routeByPreface(socket: net.Socket, h1: http.Server, h2: http2.Http2Server, onRouted?: () => void): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const n = Math.min(head.length, H2_PREFACE.length);
    const isH2 = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
    if (isH2 && head.length < H2_PREFACE.length) return;
    onRouted?.();
    socket.off("data", onData);
    socket.pause();
    socket.unshift(head);
    (isH2 ? h2 : h1).emit("connection", socket);
    // The HTTP/2 session reads the unshifted bytes itself (socket.read()) and then the native handle;
    // resuming would flush them as 'data' events nobody listens to, losing the connection preface.
    if (!isH2) socket.resume();
  };
  socket.on("data", onData);
}
