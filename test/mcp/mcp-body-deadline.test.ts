/**
 * POST /mcp holds its request bodies to the RPCs' rules (issue 24): a body that trickles a byte far inside
 * the stall deadline, under ACMS_MIN_BODY_RATE, is abandoned once ACMS_BODY_TIMEOUT_MS was waited; one that
 * stops sending is abandoned as stalled. Asserted on events (the server answers 408 and closes), not on time.
 */
import net from "node:net";
import { startTestServer, type TestServer } from "../support/test-server.js";

const STALL_MS = 1_000;
const TRICKLE_EVERY_MS = 50;
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_BODY_TIMEOUT_MS: String(STALL_MS), ACMS_MIN_BODY_RATE: "240", ACMS_IDLE_TIMEOUT_MS: "60000" } });
});
afterAll(async () => t?.close(true));

/** An HTTP/1.1 POST /mcp announcing `length` body bytes, then sending a byte every TRICKLE_EVERY_MS while `trickle`. */
function slowPost(length: number, trickle: boolean): Promise<string> {
  const url = new URL(t.server.url);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on("error", () => undefined);
  let answer = "";
  socket.on("data", (c: Buffer) => (answer += c.toString()));
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${t.keys.writer}\r\nAcms-Scope: 01ARZ3NDEKTSV4RRFFQ69G5FAV\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{`,
  );
  const timer = trickle ? setInterval(() => socket.writable && socket.write(" "), TRICKLE_EVERY_MS) : undefined;
  return new Promise((resolve) =>
    socket.once("close", () => {
      clearInterval(timer);
      resolve(answer);
    }),
  );
}

test("a body trickled under the minimum rate is abandoned with 408 (the bytes it would need never count)", async () => {
  const answer = await slowPost(1_000_000, true);
  expect(answer).toMatch(/^HTTP\/1\.1 408/);
  expect(answer).toContain("too slowly");
});

test("a body that stops arriving is abandoned as stalled with 408", async () => {
  const answer = await slowPost(100, false);
  expect(answer).toMatch(/^HTTP\/1\.1 408/);
  expect(answer).toContain("stalled");
});

test("over HTTP/2 (h2c) too: a stalled body is answered 408 and a wrong key 401, with no connection header", async () => {
  const http2 = await import("node:http2");
  const session = http2.connect(t.server.url);
  session.on("error", () => undefined);
  const ask = (headers: Record<string, string>, end: boolean) =>
    new Promise<number>((resolve) => {
      const req = session.request({ ":method": "POST", ":path": "/mcp", "content-type": "application/json", ...headers });
      req.on("error", () => undefined);
      req.on("response", (h) => resolve(Number(h[":status"])));
      req.write("{");
      if (end) req.end();
    });
  try {
    expect(await ask({ authorization: "Bearer nope", "acms-scope": "01ARZ3NDEKTSV4RRFFQ69G5FAV" }, true)).toBe(401);
    expect(await ask({ authorization: `Bearer ${t.keys.writer}`, "acms-scope": "01ARZ3NDEKTSV4RRFFQ69G5FAV" }, false)).toBe(408);
  } finally {
    session.destroy();
  }
});
