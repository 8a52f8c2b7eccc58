import http2 from "node:http2";
import { HTTP2_RECEIVE_WINDOW_BYTES } from "../../src/server/transport/listener.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close(true);
});

test("the server grants an HTTP/2 client a 1 MiB receive window, for each stream and for the connection", async () => {
  expect(HTTP2_RECEIVE_WINDOW_BYTES).toBe(1024 * 1024);
  const session = http2.connect(t.server.url);
  try {
    await new Promise<void>((resolve, reject) => {
      session.once("remoteSettings", () => resolve());
      session.once("error", reject);
    });
    // The server's WINDOW_UPDATE of the connection follows its SETTINGS; a ping's answer comes after both.
    await new Promise<void>((resolve, reject) => session.ping((err) => (err ? reject(err) : resolve())));
    // What this client may send ahead of what the server has read: 64 KiB without the settings.
    expect(session.remoteSettings.initialWindowSize).toBe(HTTP2_RECEIVE_WINDOW_BYTES);
    expect(session.state.remoteWindowSize).toBe(HTTP2_RECEIVE_WINDOW_BYTES);
  } finally {
    session.close();
  }
});
