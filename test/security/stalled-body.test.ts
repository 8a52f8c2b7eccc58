/**
 * Finding 3 of the hardening issue (24): a request that never finishes sending its body (an HTTP/2 stream,
 * an HTTP/1.1 body) kept its connection alive past the idle timeout (32 connections held for 34 s with a
 * 5 s timeout) and every other client of that address was refused meanwhile. Now a body that receives no
 * bytes for ACMS_BODY_TIMEOUT_MS while the server waits for it is abandoned: the HTTP/2 stream is reset (the
 * idle connection is then closed by the idle timeout), the HTTP/1.1 connection closed; and the per-peer
 * connection cap frees. Asserted on events (the stream closes, the socket closes), with short deadlines.
 */
import http2 from "node:http2";
import net from "node:net";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let t: TestServer;
/** More than the tests from 127.0.0.1 ever hold at once, so their connections are never the ones refused. */
const CAP = 16;

beforeAll(async () => {
  t = await startTestServer({
    env: {
      ACMS_BODY_TIMEOUT_MS: "300",
      ACMS_IDLE_TIMEOUT_MS: "300",
      ACMS_HANDSHAKE_TIMEOUT_MS: "1000",
      ACMS_MAX_CONNECTIONS_PER_PEER: String(CAP),
    },
  });
});

afterAll(async () => {
  await t?.close(true);
});

const SEARCH = `/${TextBackendService.typeName}/Search`;
const UPSERT = `/${IndexService.typeName}/UpsertDocuments`;
const HEALTH = `/${Health.typeName}/Check`;

/** The head of an envelope announcing 100 bytes, and 10 of them: a body that stops arriving. */
const PARTIAL_ENVELOPE = Buffer.concat([Buffer.from([0, 0, 0, 0, 100]), Buffer.alloc(10, 0x78)]);

interface Stalled {
  session: http2.ClientHttp2Session;
  /** The stalled stream closed (reset or answered by the server: the client never ended it). */
  streamClosed: Promise<void>;
  /** The connection closed. */
  sessionClosed: Promise<void>;
}

/** Opens a stream, sends its headers and `body`, never ends it. */
function stall(path: string, headers: Record<string, string>, body: Buffer, localAddress = "127.0.0.1"): Stalled {
  const session = http2.connect(t.server.url, {
    createConnection: () => net.connect({ port: t.server.port, host: "127.0.0.1", localAddress }),
  });
  session.on("error", () => undefined);
  // Closed only after the server accepted it (its SETTINGS came): a connection refused at the cap proves nothing.
  let accepted = false;
  session.once("remoteSettings", () => (accepted = true));
  const sessionClosed = new Promise<void>((r) => session.on("close", () => r())).then(() => expect(accepted).toBe(true));
  const req = session.request({ ":method": "POST", ":path": path, ...headers });
  req.on("error", () => undefined);
  req.on("data", () => undefined);
  const streamClosed = new Promise<void>((r) => req.on("close", () => r()));
  if (body.length > 0) req.write(body);
  return { session, streamClosed, sessionClosed };
}

const grpc = (key?: string) => ({
  "content-type": "application/grpc",
  te: "trailers",
  ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
});

describe("over HTTP/2, a stream whose body stops arriving is reset, and its idle connection then closed", () => {
  it.each<[string, string, () => Record<string, string>, Buffer]>([
    ["gRPC fast path, unary Search with a key", SEARCH, () => grpc(t.keys.reader), PARTIAL_ENVELOPE],
    ["gRPC fast path, Health (no key needed), no body byte at all", HEALTH, () => grpc(), Buffer.alloc(0)],
    ["gRPC fast path, unary Search without a key", SEARCH, () => grpc(), PARTIAL_ENVELOPE],
    ["gRPC client stream (connect-node)", UPSERT, () => grpc(t.keys.writer), PARTIAL_ENVELOPE],
    [
      "Connect unary with a key",
      SEARCH,
      () => ({ "content-type": "application/proto", "content-length": "100", authorization: `Bearer ${t.keys.reader}` }),
      Buffer.alloc(10, 0x78),
    ],
    [
      "Connect client stream with a key",
      UPSERT,
      () => ({ "content-type": "application/connect+proto", authorization: `Bearer ${t.keys.writer}` }),
      PARTIAL_ENVELOPE,
    ],
  ])("%s", async (_name, path, headers, body) => {
    const s = stall(path, headers(), body);
    await s.streamClosed;
    await s.sessionClosed;
  });
});

describe("over HTTP/1.1, a body that stops arriving closes its connection", () => {
  /** Sends an idle request, then the head of a POST whose 100-byte body stops after its first 10 bytes. */
  function stallH1(path: string, headers: Record<string, string>, body = Buffer.alloc(10, 0x78)): Promise<string> {
    return new Promise((resolve) => {
      const socket = net.connect({ port: t.server.port, host: "127.0.0.1" });
      const chunks: Buffer[] = [];
      socket.on("error", () => undefined);
      socket.on("data", (c: Buffer) => chunks.push(c));
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
      // An idle keep-alive request first: its answer shows the connection was accepted, not refused at the cap.
      socket.write("GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      socket.once("data", () => {
        const head = [`POST ${path} HTTP/1.1`, "Host: 127.0.0.1", "Content-Length: 100"];
        for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
        socket.write(head.join("\r\n") + "\r\n\r\n");
        socket.write(body);
      });
    });
  }

  it("Connect unary with a key, and Health without one", async () => {
    // Only the 404 of the first request came: the stalled one was never answered, its connection closed.
    const search = await stallH1(SEARCH, { "Content-Type": "application/proto", Authorization: `Bearer ${t.keys.reader}` });
    expect(search.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 404"]);
    const health = await stallH1(HEALTH, { "Content-Type": "application/proto" });
    expect(health.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 404"]);
  });

  it("gRPC-Web unary with a key", async () => {
    const answer = await stallH1(
      SEARCH,
      { "Content-Type": "application/grpc-web+proto", Authorization: `Bearer ${t.keys.reader}` },
      PARTIAL_ENVELOPE,
    );
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 404"]);
  });
});

it("one address holding its cap of stalled requests gets its connections back once they are abandoned", async () => {
  // The attacker calls from 127.0.0.3 (all of 127/8 is loopback).
  const held = Array.from({ length: CAP }, () => stall(SEARCH, grpc(t.keys.reader), PARTIAL_ENVELOPE, "127.0.0.3"));
  await Promise.all(held.map((s) => new Promise<void>((r) => s.session.once("connect", () => r()))));
  // At the cap: one more connection from that address is closed on arrival.
  const refused = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ port: t.server.port, host: "127.0.0.1", localAddress: "127.0.0.3" });
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(true));
    socket.on("data", () => undefined);
  });
  expect(refused).toBe(true);
  // The stalled streams are reset and their idle connections closed...
  await Promise.all(held.map((s) => s.sessionClosed));
  // ...so the address is served again.
  const healthy = stall(HEALTH, grpc(), Buffer.from([0, 0, 0, 0, 0]), "127.0.0.3");
  const status = await new Promise<string | undefined>((resolve) => {
    const req = healthy.session.request({ ":method": "POST", ":path": HEALTH, ...grpc() });
    req.on("response", (h) => {
      if (h["grpc-status"] !== undefined) resolve(String(h["grpc-status"]));
    });
    req.on("trailers", (h) => resolve(String(h["grpc-status"])));
    req.on("data", () => undefined);
    req.on("error", () => resolve(undefined));
    req.end(Buffer.from([0, 0, 0, 0, 0]));
  });
  healthy.session.destroy();
  expect(status).toBe("0");
});
