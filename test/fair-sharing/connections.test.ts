/**
 * Connection limits over raw sockets: an HTTP/2 client that sends only the preface, or the preface and its
 * SETTINGS and then nothing, is closed; an idle HTTP/1.1 keep-alive connection is closed; one peer address
 * cannot hold more than its cap of connections, and other peers (and health) are served meanwhile.
 */
import net from "node:net";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let t: TestServer;
const CAP = 12;

beforeAll(async () => {
  t = await startTestServer({
    env: { ACMS_IDLE_TIMEOUT_MS: "400", ACMS_HANDSHAKE_TIMEOUT_MS: "400", ACMS_MAX_CONNECTIONS_PER_PEER: String(CAP) },
  });
});

afterAll(async () => {
  await t?.close(true);
});

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** An empty SETTINGS frame. */
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

interface Raw {
  socket: net.Socket;
  closed: Promise<void>;
  isClosed(): boolean;
}

function open(first: Buffer, localAddress = "127.0.0.1"): Promise<Raw> {
  return new Promise((resolve) => {
    let closed = false;
    const socket = net.connect({ port: t.server.port, host: "127.0.0.1", localAddress });
    socket.on("error", () => undefined);
    const done = new Promise<void>((r) =>
      socket.on("close", () => {
        closed = true;
        r();
      }),
    );
    socket.on("connect", () => {
      // Read (and drop) what the server sends, so its close is seen.
      socket.on("data", () => undefined);
      if (first.length > 0) socket.write(first);
      resolve({ socket, closed: done, isClosed: () => closed });
    });
  });
}

/**
 * A health check on a connection of its own: the server closes idle connections after 400 ms here, so a
 * cached client session could be closed under the check by the very rule these tests exercise.
 */
async function healthy(): Promise<void> {
  const session = new Http2SessionManager(t.server.url);
  try {
    const health = createClient(Health, createGrpcTransport({ baseUrl: t.server.url, sessionManager: session }));
    expect((await health.check({})).status).toBe(ServingStatus.SERVING);
  } finally {
    session.abort();
  }
}

it("an HTTP/2 client that sends only the preface is closed", async () => {
  const raw = await open(PREFACE);
  await healthy();
  await raw.closed;
});

it("an HTTP/2 client that sends the preface and SETTINGS, then nothing, is closed when idle", async () => {
  const raw = await open(Buffer.concat([PREFACE, SETTINGS]));
  await healthy();
  await raw.closed;
});

it("an idle HTTP/1.1 keep-alive connection is closed", async () => {
  const raw = await open(Buffer.from("GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"));
  const reply = await new Promise<string>((r) => raw.socket.prependOnceListener("data", (c: Buffer) => r(c.toString("latin1"))));
  expect(reply).toMatch(/^HTTP\/1\.1 404/);
  await raw.closed;
});

it("one peer address holds at most its cap of connections; other peers are served meanwhile", async () => {
  // The attacker calls from 127.0.0.2 (all of 127/8 is loopback), the tests' clients from 127.0.0.1.
  const held: Raw[] = [];
  for (let i = 0; i < CAP; i++) held.push(await open(Buffer.from("PRI * HTTP/2.0\r\n"), "127.0.0.2"));
  const extra = await open(Buffer.alloc(0), "127.0.0.2");
  await extra.closed;
  expect(held.filter((r) => r.isClosed())).toEqual([]);
  await healthy();
  for (const r of held) r.socket.destroy();
  await Promise.all(held.map((r) => r.closed));
  // Once they are gone, the peer may connect again.
  const again = await open(Buffer.concat([PREFACE, SETTINGS]), "127.0.0.2");
  expect(again.isClosed()).toBe(false);
  again.socket.destroy();
});
