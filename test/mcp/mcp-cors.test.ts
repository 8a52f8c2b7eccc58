/** A browser MCP client (say, an inspector page) may call POST /mcp from an allowed origin (ACMS_CORS_ORIGINS). */
import { startTestServer, type TestServer } from "../support/test-server.js";
import { seedMcpFixture, type McpFixture } from "./mcp-fixture.js";

const APP = "http://app.example";
let t: TestServer;
let f: McpFixture;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_CORS_ORIGINS: APP } });
  f = await seedMcpFixture(t);
}, 60_000);
afterAll(async () => t?.close(true));

test("the preflight of POST /mcp allows the key, scope and MCP headers; the call answers with the origin allowed", async () => {
  const pre = await fetch(`${t.server.url}/mcp`, {
    method: "OPTIONS",
    headers: {
      origin: APP,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization,acms-scope,content-type,mcp-protocol-version",
    },
  });
  expect(pre.status).toBe(204);
  const allowed = (pre.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
  expect(allowed).toEqual(expect.arrayContaining(["authorization", "acms-scope", "content-type", "mcp-protocol-version"]));
  const res = await fetch(`${t.server.url}/mcp`, {
    method: "POST",
    headers: {
      origin: APP,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${t.keys.writer}`,
      "acms-scope": f.scope,
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("access-control-allow-origin")).toBe(APP);
  expect(((await res.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(10);
});
