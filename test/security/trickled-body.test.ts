/**
 * Issue 24, finding 3, its second half (red team): a body that trickles a byte just inside the stall deadline
 * never stalled, so it held its stream (and its connection, and a place under the per-peer cap) for as long
 * as its sender liked. Now a single-message body (unary, server-streaming) must average ACMS_MIN_BODY_RATE
 * bytes/s once the server has waited ACMS_BODY_TIMEOUT_MS for it, or it is abandoned like a stalled one; a
 * client stream may pause between messages (only the stall deadline applies to it), and a slow body above
 * the rate is read and answered. Asserted on events (streams and sockets close or answer), not on time.
 */
import http2 from "node:http2";
import net from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { SearchRequestSchema, TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let t: TestServer;
/** The stall deadline (and the rate's grace): the trickles below send a byte far more often than this. */
const STALL_MS = 1_000;
const TRICKLE_EVERY_MS = 50;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_BODY_TIMEOUT_MS: String(STALL_MS), ACMS_MIN_BODY_RATE: "240", ACMS_IDLE_TIMEOUT_MS: "60000" } });
});

afterAll(async () => {
  await t?.close(true);
});

const SEARCH = `/${TextBackendService.typeName}/Search`;
const UPSERT = `/${IndexService.typeName}/UpsertDocuments`;

/** A gRPC envelope announcing `length` bytes (its body then trickles in). */
const envelopeHead = (length: number) => Buffer.from([0, (length >>> 24) & 255, (length >>> 16) & 255, (length >>> 8) & 255, length & 255]);

interface Trickle {
  /** The stream closed (reset by the server, or answered); resolves with the grpc-status it answered, if any. */
  closed: Promise<string | undefined>;
  /** Whether the stream is still open. */
  open: () => boolean;
  stop: () => void;
}

/** Opens an HTTP/2 stream and sends `body` one byte every TRICKLE_EVERY_MS (then, if `end`, ends it). */
function trickleH2(path: string, headers: Record<string, string>, body: Buffer, chunk = 1, end = false): Trickle {
  const session = http2.connect(t.server.url);
  session.on("error", () => undefined);
  const req = session.request({ ":method": "POST", ":path": path, ...headers });
  req.on("error", () => undefined);
  req.on("data", () => undefined);
  let status: string | undefined;
  req.on("response", (h) => (status ??= h["grpc-status"] === undefined ? undefined : String(h["grpc-status"])));
  req.on("trailers", (h) => (status ??= String(h["grpc-status"])));
  let isOpen = true;
  let sent = 0;
  const timer = setInterval(() => {
    if (sent >= body.length) {
      clearInterval(timer);
      if (end) req.end();
      return;
    }
    if (!req.destroyed && !req.closed) req.write(body.subarray(sent, sent + chunk));
    sent += chunk;
  }, TRICKLE_EVERY_MS);
  const closed = new Promise<string | undefined>((r) =>
    req.on("close", () => {
      isOpen = false;
      clearInterval(timer);
      r(status);
    }),
  );
  return {
    closed,
    open: () => isOpen,
    stop: () => {
      clearInterval(timer);
      session.destroy();
    },
  };
}

const grpc = (key: string) => ({ "content-type": "application/grpc", te: "trailers", authorization: `Bearer ${key}` });

describe("over HTTP/2, a single-message body trickling under the minimum rate is reset", () => {
  it.each<[string, string, () => Record<string, string>, Buffer]>([
    [
      "gRPC fast path, unary Search",
      SEARCH,
      () => grpc(t.keys.reader),
      Buffer.concat([envelopeHead(100_000), Buffer.alloc(100_000, 0x78)]),
    ],
    [
      "Connect unary Search",
      SEARCH,
      () => ({ "content-type": "application/proto", "content-length": "100000", authorization: `Bearer ${t.keys.reader}` }),
      Buffer.alloc(100_000, 0x78),
    ],
  ])("%s", async (_name, path, headers, body) => {
    const s = trickleH2(path, headers(), body);
    // Reset before its body ended (100,000 bytes at 20 bytes/s would take more than an hour), never answered.
    expect(await s.closed).toBeUndefined();
    s.stop();
  });
});

it("over HTTP/1.1, a Connect unary body trickling under the minimum rate closes its connection", async () => {
  const answer = await new Promise<string>((resolve) => {
    const socket = net.connect({ port: t.server.port, host: "127.0.0.1" });
    const chunks: Buffer[] = [];
    socket.on("error", () => undefined);
    socket.on("data", (c: Buffer) => chunks.push(c));
    const head = [`POST ${SEARCH} HTTP/1.1`, "Host: 127.0.0.1", "Content-Length: 100000", "Content-Type: application/proto"];
    head.push(`Authorization: Bearer ${t.keys.reader}`);
    socket.write(head.join("\r\n") + "\r\n\r\n");
    const timer = setInterval(() => socket.writable && socket.write("x"), TRICKLE_EVERY_MS);
    socket.on("close", () => {
      clearInterval(timer);
      resolve(Buffer.concat(chunks).toString("latin1"));
    });
  });
  // No answer: the connection was closed under the trickle.
  expect(answer).toBe("");
});

it("a client stream trickling at the same rate is left to the stall deadline, and outlives a unary trickle", async () => {
  const unary = trickleH2(SEARCH, grpc(t.keys.reader), Buffer.concat([envelopeHead(100_000), Buffer.alloc(100_000, 0x78)]));
  const stream = trickleH2(UPSERT, grpc(t.keys.writer), Buffer.concat([envelopeHead(100_000), Buffer.alloc(100_000, 0x78)]));
  await unary.closed;
  // The unary call was cut by the rate rule; the stream, trickling the same bytes, is still open...
  expect(stream.open()).toBe(true);
  // ...and stays open past as long again (it never went STALL_MS without a byte).
  await new Promise((r) => setTimeout(r, 2 * STALL_MS));
  expect(stream.open()).toBe(true);
  stream.stop();
  unary.stop();
});

it("a slow body above the minimum rate is read whole and answered", async () => {
  // An 8,000-byte Search request in 200-byte pieces every 50 ms: ~4,000 bytes/s for ~2 s, past the grace, over the rate.
  const message = toBinary(SearchRequestSchema, create(SearchRequestSchema, { query: "q".repeat(7_990) }));
  const s = trickleH2(SEARCH, grpc(t.keys.reader), Buffer.concat([envelopeHead(message.length), Buffer.from(message)]), 200, true);
  // Answered (no acms-scope header: FAILED_PRECONDITION = 9), not reset.
  expect(await s.closed).toBe("9");
  s.stop();
});
