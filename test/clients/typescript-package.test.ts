import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { createAcmsClient, type AcmsClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { CLIENT_DIR, installClientPackage, ROOT, type InstalledClient } from "./typescript-package/install-client-package.js";

const exec = promisify(execFile);
/** Files of a user's project that depends on @acms/client (outside the repository's typecheck: they import the installed package). */
const FIXTURES = join(__dirname, "typescript-package/user-project");

let t: TestServer;
let admin: AcmsClient;
let pkg: InstalledClient;
let resourceId: string;
/** Two static servers of the same page: the first one's origin is in ACMS_CORS_ORIGINS, the second's is not. */
let allowedPage: http.Server;
let otherPage: http.Server;
let browser: Browser | undefined;

/** Serves the page and its bundle from `dir` on 127.0.0.1:0 (a port is part of the origin). */
async function servePage(dir: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const file = new URL(req.url ?? "/", "http://x").pathname === "/bundle.js" ? "bundle.js" : "index.html";
    res.writeHead(200, { "content-type": file === "bundle.js" ? "text/javascript" : "text/html" });
    res.end(readFileSync(join(dir, file)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}
const originOf = (s: http.Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

beforeAll(async () => {
  pkg = await installClientPackage();
  const pageDir = join(pkg.appDir, "page");
  mkdirSync(pageDir);
  copyFileSync(join(FIXTURES, "browser-page.js"), join(pkg.appDir, "browser-page.js"));
  // Bundled the way a web app bundles its dependencies: from the installed package, for the browser.
  await build({
    entryPoints: [join(pkg.appDir, "browser-page.js")],
    absWorkingDir: pkg.appDir,
    bundle: true,
    format: "esm",
    platform: "browser",
    outfile: join(pageDir, "bundle.js"),
    logLevel: "silent",
  });
  writeFileSync(join(pageDir, "index.html"), '<!doctype html><title>acms page</title><script type="module" src="/bundle.js"></script>');
  allowedPage = await servePage(pageDir);
  otherPage = await servePage(pageDir);
  t = await startTestServer({ env: { ACMS_CORS_ORIGINS: originOf(allowedPage) } });
  admin = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  await admin.registry.createProject({ name: "local/tspkg" });
  const { resource } = await admin.registry.registerResource({ project: "local/tspkg", alias: "handbook", kind: "docs" });
  resourceId = resource!.id;
  await admin.index.upsertDocuments(
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
}, 180_000);
afterAll(async () => {
  await browser?.close();
  allowedPage?.close();
  otherPage?.close();
  admin?.close();
  await t?.close(true);
  if (pkg) rmSync(pkg.workDir, { recursive: true, force: true });
});

/** The server's address as ACMS_URL, or as the ACMS_HOST and ACMS_PORT the CLI and the server read. */
function addressEnv(style: "ACMS_URL" | "ACMS_HOST/ACMS_PORT"): Record<string, string> {
  if (style === "ACMS_URL") return { ACMS_URL: t.server.url };
  const url = new URL(t.server.url);
  return { ACMS_HOST: url.hostname, ACMS_PORT: url.port };
}

// call-server.cjs with require(esm) turned off is what Node before 20.19 does: only the CommonJS build can load.
test.each([
  { protocol: "grpc", program: "call-server.mjs", flags: [], build: "esm", address: "ACMS_URL" },
  { protocol: "connect", program: "call-server.mjs", flags: [], build: "esm", address: "ACMS_HOST/ACMS_PORT" },
  {
    protocol: "grpc",
    program: "call-server.cjs",
    flags: ["--no-experimental-require-module"],
    build: "cjs",
    address: "ACMS_HOST/ACMS_PORT",
  },
  { protocol: "connect", program: "call-server.cjs", flags: [], build: "cjs", address: "ACMS_URL" },
] as const)(
  "plain node ($program $flags) calls the real server over $protocol from $address and decodes a ScopeViolation",
  async ({ protocol, program, flags, build, address }) => {
    for (const f of ["call-server-scenario.cjs", program]) copyFileSync(join(FIXTURES, f), join(pkg.appDir, f));
    const { stdout } = await exec(process.execPath, [...flags, program, protocol], {
      cwd: pkg.appDir,
      env: { PATH: process.env.PATH, ...addressEnv(address), ACMS_API_KEY: t.keys.writer, ACMS_PROJECT: "local/tspkg" },
    });
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({
      protocol,
      serving: true,
      paths: ["onboarding.md"],
      refusedCode: "PermissionDenied",
      violation: { typeName: "acms.v1.ScopeViolation", resourceIds: ["01ARZ3NDEKTSV4RRFFQ69G5FAV"], scopeProjectNames: ["local/tspkg"] },
      badFields: ["query"],
    });
    expect(out.entry).toContain(`/node_modules/@acms/client/dist/${build}/clients/typescript/src/index.js`);
    expect(out.scopeId).toMatch(/^[0-9A-Z]{26}$/);
  },
  60_000,
);

test("the package's example, copied into the user's project, runs against the real server found from ACMS_HOST/ACMS_PORT", async () => {
  mkdirSync(join(pkg.appDir, "examples"), { recursive: true });
  copyFileSync(join(CLIENT_DIR, "examples/quickstart.ts"), join(pkg.appDir, "examples/quickstart.ts"));
  // The repository's tsx stands in for the user's (`npx tsx quickstart.ts`); the example's imports resolve from its own folder.
  const tsx = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
  const { stdout } = await exec(process.execPath, ["--import", tsx, "examples/quickstart.ts", "onboarding checklist"], {
    cwd: pkg.appDir,
    env: { PATH: process.env.PATH, ...addressEnv("ACMS_HOST/ACMS_PORT"), ACMS_API_KEY: t.keys.writer, ACMS_PROJECT: "local/tspkg" },
  });
  expect(stdout).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/tspkg$/m);
  expect(stdout).toMatch(/^text search: onboarding\.md \(\d\.\d{3}\)/m);
  expect(stdout).toMatch(/^best hit uko:\/\/[0-9A-Z]{26}\/onboarding\.md(#\d+)?: [1-9]\d* characters$/m);
  expect(stdout).toContain("refused out of scope: 01ARZ3NDEKTSV4RRFFQ69G5FAV (scope projects local/tspkg)");
}, 60_000);

/** What the page left in window.acmsResults, and what Chromium logged on its console meanwhile. */
async function openPage(page: http.Server): Promise<{ results: Record<string, unknown>[]; console: string[] }> {
  browser ??= await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  const tab = await browser.newPage();
  const logged: string[] = [];
  tab.on("console", (m) => logged.push(m.text()));
  try {
    const query = new URLSearchParams({ api: t.server.url, key: t.keys.writer, project: "local/tspkg" });
    await tab.goto(`${originOf(page)}/?${query}`);
    await tab.waitForFunction(() => (window as unknown as { acmsResults?: unknown }).acmsResults !== undefined);
    const results = await tab.evaluate(() => (window as unknown as { acmsResults: Promise<Record<string, unknown>[]> }).acmsResults);
    return { results, console: logged };
  } finally {
    await tab.close();
  }
}

test("a page on an origin in ACMS_CORS_ORIGINS calls the server from Chromium with the browser client (Connect and gRPC-Web)", async () => {
  const { results } = await openPage(allowedPage);
  for (const protocol of ["connect", "grpc-web"]) {
    expect(results.find((r) => r.protocol === protocol)).toEqual({
      protocol,
      paths: ["onboarding.md"],
      streamedScopeIdMatches: true,
      refusedCode: "PermissionDenied",
      violation: { resourceIds: ["01ARZ3NDEKTSV4RRFFQ69G5FAV"], scopeProjectNames: ["local/tspkg"] },
    });
  }
}, 120_000);

test("a page on an origin not listed is refused by the browser", async () => {
  const { results, console: logged } = await openPage(otherPage);
  expect(results.map((r) => r.protocol)).toEqual(["connect", "grpc-web"]);
  for (const r of results) expect(r).toMatchObject({ error: { message: expect.stringContaining("Failed to fetch") } });
  expect(logged.some((line) => line.includes("blocked by CORS policy"))).toBe(true);
}, 120_000);
