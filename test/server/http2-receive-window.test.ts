/**
 * The HTTP/2 receive window (issue 29): a connection starts with HTTP/2's 64 KiB for each stream and for the
 * connection, and gets 1 MiB of each once a call on it has proved a valid key, on the gRPC fast path and through
 * connect-node alike. Until then a body the server refuses unread (decode-before-auth) holds at most 64 KiB a
 * connection; after it, an upload is not held back by window updates.
 */
import http2 from "node:http2";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { HTTP2_TRUSTED_RECEIVE_WINDOW_BYTES } from "../../src/server/transport/receive-window.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const DEFAULT_WINDOW = 65_535;
const LIST_PROJECTS = `/${RegistryService.typeName}/ListProjects`;
const HEALTH_CHECK = `/${Health.typeName}/Check`;
const GRPC = { "content-type": "application/grpc", te: "trailers" };
const CONNECT = { "content-type": "application/proto", "connect-protocol-version": "1" };
/** An enveloped empty message (gRPC), and Connect's unenveloped one. */
const EMPTY_ENVELOPE = Buffer.alloc(5);
const EMPTY = Buffer.alloc(0);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close(true);
});

async function open(): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(t.server.url);
  await new Promise<void>((resolve, reject) => {
    session.once("remoteSettings", () => resolve());
    session.once("error", reject);
  });
  return session;
}

/** One call, answered and ended; the HTTP status. */
function call(session: http2.ClientHttp2Session, path: string, headers: Record<string, string>, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": path, ...headers });
    let status = 0;
    req.on("response", (h) => (status = Number(h[":status"])));
    req.on("data", () => undefined);
    req.on("end", () => resolve(status));
    req.on("error", reject);
    req.end(body);
  });
}

/** What this client may send ahead of what the server has read: each new stream's window, and the connection's. */
async function granted(session: http2.ClientHttp2Session): Promise<{ stream: number; connection: number }> {
  // The server's SETTINGS and WINDOW_UPDATE frames come before its answer to a ping sent after them.
  await new Promise<void>((resolve, reject) => session.ping((err) => (err ? reject(err) : resolve())));
  return { stream: session.remoteSettings.initialWindowSize!, connection: session.state.remoteWindowSize! };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

test.each([
  ["the gRPC fast path", GRPC, EMPTY_ENVELOPE],
  ["Connect (through connect-node)", CONNECT, EMPTY],
])("over %s, a connection gets the 1 MiB window once a call proves a valid key, not before", async (_name, headers, body) => {
  expect(HTTP2_TRUSTED_RECEIVE_WINDOW_BYTES).toBe(1024 * 1024);
  const session = await open();
  try {
    expect(await granted(session)).toEqual({ stream: DEFAULT_WINDOW, connection: DEFAULT_WINDOW });
    // No key, an unknown key, and a public service (no key asked): the window stays HTTP/2's default.
    await call(session, LIST_PROJECTS, headers, body);
    await call(session, LIST_PROJECTS, { ...headers, ...bearer("acms_not-a-key") }, body);
    await call(session, HEALTH_CHECK, headers, body);
    expect((await granted(session)).stream).toBe(DEFAULT_WINDOW);
    expect((await granted(session)).connection).toBeLessThanOrEqual(DEFAULT_WINDOW);
    // A valid key: the connection and every stream it opens get 1 MiB.
    expect(await call(session, LIST_PROJECTS, { ...headers, ...bearer(t.keys.writer) }, body)).toBe(200);
    const after = await granted(session);
    expect(after.stream).toBe(HTTP2_TRUSTED_RECEIVE_WINDOW_BYTES);
    expect(after.connection).toBeGreaterThan(HTTP2_TRUSTED_RECEIVE_WINDOW_BYTES - DEFAULT_WINDOW);
  } finally {
    session.close();
  }
});
