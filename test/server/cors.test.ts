import http from "node:http";
import http2 from "node:http2";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const APP = "http://app.example.test:8080";
const OTHER = "https://evil.example.test";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP/1.1 request, as a browser's fetch would send it. */
function h1(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** One HTTP/2 request (h2c with prior knowledge), for the other listener behind the same port. */
function h2(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const req = session.request({ ":method": method, ":path": new URL(url).pathname, ...headers });
    let text = "";
    let status = 0;
    let got: Answer["headers"] = {};
    req.setEncoding("utf8");
    req.on("response", (h) => {
      status = Number(h[":status"]);
      got = h as Answer["headers"];
    });
    req.on("data", (c: string) => (text += c));
    req.on("end", () => {
      session.close();
      resolve({ status, headers: got, body: text });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const list = (v: string | string[] | undefined) =>
  String(v ?? "")
    .toLowerCase()
    .split(/\s*,\s*/);
const corsHeaders = (a: Answer) => Object.keys(a.headers).filter((h) => h.startsWith("access-control-"));

describe("ACMS_CORS_ORIGINS", () => {
  test("unset or blank is no CORS, `*` is any origin, a list is those origins", () => {
    expect(loadConfig({}).corsOrigins).toBeUndefined();
    expect(loadConfig({ ACMS_CORS_ORIGINS: " " }).corsOrigins).toBeUndefined();
    expect(loadConfig({ ACMS_CORS_ORIGINS: "*" }).corsOrigins).toBe("*");
    expect(loadConfig({ ACMS_CORS_ORIGINS: `${APP}, https://b.example.test` }).corsOrigins).toEqual([APP, "https://b.example.test"]);
  });

  test.each([
    "https://app.example.test/",
    "app.example.test",
    "ftp://app.example.test",
    "*,https://a.example.test",
    "https://a.example.test/path",
    "https://a.example.test,",
    "HTTPS://A.example.test",
  ])("refuses %j with a message naming the variable", (raw) => {
    expect(() => loadConfig({ ACMS_CORS_ORIGINS: raw })).toThrow(/^ACMS_CORS_ORIGINS must be "\*" or comma-separated origins/);
  });
});

describe.each([
  ["HTTP/1.1", h1],
  ["HTTP/2", h2],
] as const)("CORS with a listed origin over %s", (_name, send) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ env: { ACMS_CORS_ORIGINS: `${APP},https://other-app.example.test` } });
    await t.client(RegistryService, "admin").createProject({ name: "local/cors" });
  });
  afterAll(async () => {
    await t.close(true);
  });

  const preflight = (origin: string, requestHeaders: string) =>
    send(`${t.server.url}/acms.v1.RegistryService/ListProjects`, "OPTIONS", {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": requestHeaders,
    });

  test("a preflight from an allowed origin is answered with the methods and headers Connect, gRPC-Web and ACMS use", async () => {
    const res = await preflight(APP, "authorization,acms-scope,content-type,connect-protocol-version");
    expect(res.status).toBe(204);
    expect(res.headers["access-control-allow-origin"]).toBe(APP);
    expect(list(res.headers.vary)).toContain("origin");
    expect(list(res.headers["access-control-allow-methods"])).toEqual(expect.arrayContaining(["post", "get"]));
    expect(list(res.headers["access-control-allow-headers"])).toEqual(
      expect.arrayContaining([
        "authorization",
        "acms-scope",
        "content-type",
        "connect-protocol-version",
        "connect-timeout-ms",
        "x-grpc-web",
        "x-user-agent",
        "grpc-timeout",
      ]),
    );
    expect(Number(res.headers["access-control-max-age"])).toBeGreaterThan(0);
    expect(res.body).toBe("");
  });

  test("the actual call from an allowed origin exposes the gRPC status trailers and the acms-* headers", async () => {
    const res = await send(
      `${t.server.url}/acms.v1.RegistryService/ListProjects`,
      "POST",
      { origin: APP, "content-type": "application/json", "connect-protocol-version": "1", authorization: `Bearer ${t.keys.admin}` },
      "{}",
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).projects).toEqual([expect.objectContaining({ name: "local/cors" })]);
    expect(res.headers["access-control-allow-origin"]).toBe(APP);
    expect(list(res.headers["access-control-expose-headers"])).toEqual(
      expect.arrayContaining([
        "grpc-status",
        "grpc-message",
        "grpc-status-details-bin",
        "acms-scope-id",
        "acms-exhaustive",
        "acms-index-generation",
        "acms-partial",
        "acms-failed-sources",
      ]),
    );
  });

  test("an error answer to an allowed origin still carries the CORS headers, so the page can read the code", async () => {
    const res = await send(
      `${t.server.url}/acms.v1.RegistryService/ListProjects`,
      "POST",
      { origin: APP, "content-type": "application/json", "connect-protocol-version": "1" },
      "{}",
    );
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ code: "unauthenticated" });
    expect(res.headers["access-control-allow-origin"]).toBe(APP);
  });

  test("a disallowed origin gets no CORS headers, on the preflight and on the call", async () => {
    const pre = await preflight(OTHER, "authorization,content-type");
    expect(corsHeaders(pre)).toEqual([]);
    expect(pre.status).not.toBe(204);
    const call = await send(
      `${t.server.url}/grpc.health.v1.Health/Check`,
      "POST",
      { origin: OTHER, "content-type": "application/json" },
      "{}",
    );
    expect(call.status).toBe(200);
    expect(corsHeaders(call)).toEqual([]);
  });

  test("a call without an Origin (not a browser) gets no CORS headers", async () => {
    const call = await send(`${t.server.url}/grpc.health.v1.Health/Check`, "POST", { "content-type": "application/json" }, "{}");
    expect(JSON.parse(call.body)).toEqual({ status: "SERVING" });
    expect(corsHeaders(call)).toEqual([]);
  });
});

test("`*` allows any origin without echoing it", async () => {
  const t = await startTestServer({ env: { ACMS_CORS_ORIGINS: "*" } });
  try {
    const pre = await h1(`${t.server.url}/acms.v1.ScopeService/ResolveScope`, "OPTIONS", {
      origin: OTHER,
      "access-control-request-method": "POST",
    });
    expect(pre.status).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("*");
    expect(pre.headers.vary).toBeUndefined();
  } finally {
    await t.close(true);
  }
});

test("without ACMS_CORS_ORIGINS a preflight gets no CORS headers", async () => {
  const t = await startTestServer();
  try {
    const pre = await h1(`${t.server.url}/acms.v1.ScopeService/ResolveScope`, "OPTIONS", {
      origin: APP,
      "access-control-request-method": "POST",
    });
    expect(corsHeaders(pre)).toEqual([]);
    expect(pre.status).not.toBe(204);
  } finally {
    await t.close(true);
  }
});
