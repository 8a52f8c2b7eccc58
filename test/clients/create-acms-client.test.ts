import { execFile } from "node:child_process";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { Code, ConnectError } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { createAcmsClient, findFieldViolations, findScopeViolation, type AcmsClient, type AcmsProtocol } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const exec = promisify(execFile);
const ROOT = join(__dirname, "..", "..");

let t: TestServer;
let resourceId: string;
const opened: AcmsClient[] = [];

function client(opts: Partial<Parameters<typeof createAcmsClient>[0]> = {}): AcmsClient {
  const c = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer, ...opts });
  opened.push(c);
  return c;
}

beforeAll(async () => {
  t = await startTestServer();
  const acms = client();
  await acms.registry.createProject({ name: "local/client" });
  const { resource } = await acms.registry.registerResource({ project: "local/client", alias: "handbook", kind: "docs" });
  resourceId = resource!.id;
  await acms.index.upsertDocuments(
    (async function* () {
      yield {
        resourceId,
        documents: [
          { path: "onboarding.md", content: "# Onboarding\n\nNew engineers start with the onboarding checklist and a buddy." },
          { path: "deploy.md", content: "# Deploying\n\nDeploys run from the release pipeline after review." },
        ],
      };
    })(),
  );
});
afterAll(async () => {
  for (const c of opened) c.close();
  await t.close(true);
});

describe.each<[AcmsProtocol, "1.1" | "2"]>([
  ["connect", "2"],
  ["grpc", "2"],
  ["grpc-web", "2"],
  ["connect", "1.1"],
  ["grpc-web", "1.1"],
])("createAcmsClient over %s (HTTP/%s)", (protocol, httpVersion) => {
  test("sends the key and the scope on every service", async () => {
    const acms = client({ protocol, httpVersion });
    const { scope } = await acms.scope.resolveScope({ projects: ["local/client"] });
    expect(scope!.resourceIds).toEqual([resourceId]);
    const scoped = acms.withScope(scope!.scopeId);
    expect(scoped.scopeId).toBe(scope!.scopeId);
    const { results, scopeId } = await scoped.text.search({ query: "onboarding checklist" });
    expect(scopeId).toBe(scope!.scopeId);
    expect(results[0].path).toBe("onboarding.md");
    const { fragment } = await scoped.tiers.storeFragment({ fragment: { projectName: "local/client", content: `note over ${protocol}` } });
    expect(fragment!.tokenCount).toBeGreaterThan(0);
    // The unscoped parent still sends no scope: a scoped RPC through it fails as the contract says.
    await expect(acms.text.search({ query: "x" })).rejects.toMatchObject({ code: Code.FailedPrecondition });
  });
});

test("health answers without a key", async () => {
  const acms = client({ apiKey: undefined });
  const res = await acms.health.check({ service: "" });
  expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  await expect(acms.registry.listProjects({})).rejects.toMatchObject({ code: Code.Unauthenticated });
});

test("findScopeViolation and findFieldViolations read the error details", async () => {
  const acms = client();
  const { scope } = await acms.scope.resolveScope({ projects: ["local/client"] });
  const scoped = acms.withScope(scope!.scopeId);
  const outside = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
  const refused = await scoped.scope.validateResourceScope({ requestedResourceIds: [outside] }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ConnectError);
  expect(findScopeViolation(refused)).toMatchObject({ resourceIds: [outside], scopeProjectNames: ["local/client"] });
  expect(findFieldViolations(refused)).toEqual([]);

  const bad = await scoped.text.search({ query: "" }).catch((e: unknown) => e);
  expect(findScopeViolation(bad)).toBeUndefined();
  expect(findFieldViolations(bad).map((v) => v.field)).toEqual(["query"]);
  expect(findScopeViolation(new Error("plain"))).toBeUndefined();
});

test.each<AcmsProtocol>(["connect", "grpc", "grpc-web"])(
  "over HTTP/2 (%s) the client grants the server a 1 MiB receive window, for each stream and for the connection",
  async (protocol) => {
    // A bare HTTP/2 server that sees the client's settings and window, and refuses every call.
    const sessions: http2.ServerHttp2Session[] = [];
    const server = http2.createServer();
    server.on("session", (s) => sessions.push(s));
    server.on("stream", (stream) => stream.respond({ ":status": 503 }, { endStream: true }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const acms = client({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, protocol });
      await expect(acms.health.check({ service: "" })).rejects.toBeInstanceOf(ConnectError);
      expect(sessions).toHaveLength(1);
      // What the server may send ahead of what the client has read (64 KiB each without them): the window is
      // opened before the call's request is sent, so the server has it when the call ends.
      expect(sessions[0].remoteSettings.initialWindowSize).toBe(1024 * 1024);
      expect(sessions[0].state.remoteWindowSize).toBe(1024 * 1024);
      acms.close();
    } finally {
      for (const s of sessions) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  },
);

test("gRPC over HTTP/1.1 is refused up front", () => {
  expect(() => createAcmsClient({ baseUrl: t.server.url, protocol: "grpc", httpVersion: "1.1" })).toThrow(/HTTP\/2/);
});

/** The server's address as ACMS_URL, or as the ACMS_HOST and ACMS_PORT it was started with (ACMS_URL unset). */
function addressEnv(style: "ACMS_URL" | "ACMS_HOST/ACMS_PORT"): NodeJS.ProcessEnv {
  const { ACMS_URL: _url, ACMS_HOST: _host, ACMS_PORT: _port, ...rest } = process.env;
  if (style === "ACMS_URL") return { ...rest, ACMS_URL: t.server.url };
  const url = new URL(t.server.url);
  return { ...rest, ACMS_HOST: url.hostname, ACMS_PORT: url.port };
}

test.each(["ACMS_URL", "ACMS_HOST/ACMS_PORT"] as const)(
  "the example program finds the real server from %s",
  async (style) => {
    const { stdout } = await exec(
      process.execPath,
      ["--import", "tsx", join(ROOT, "examples/typescript-client.ts"), "onboarding checklist"],
      {
        env: { ...addressEnv(style), ACMS_API_KEY: t.keys.writer, ACMS_PROJECT: "local/client" },
        cwd: ROOT,
      },
    );
    expect(stdout).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/client$/m);
    expect(stdout).toMatch(/^text search: onboarding\.md/m);
    expect(stdout).toMatch(/^stored note [0-9A-Z]{26} \(\d+ tokens\)$/m);
    expect(stdout).toContain("refused out of scope: 01ARZ3NDEKTSV4RRFFQ69G5FAV (scope projects local/client)");
  },
  60_000,
);
