import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { createAcmsClient, type AcmsClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { installClientPackage, type InstalledClient } from "./typescript-package/install-client-package.js";

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

test.each(["grpc", "connect"])(
  "plain node calls the real server over %s and decodes a ScopeViolation",
  async (protocol) => {
    copyFileSync(join(FIXTURES, "call-server.mjs"), join(pkg.appDir, "call-server.mjs"));
    const { stdout } = await exec(process.execPath, ["call-server.mjs", protocol], {
      cwd: pkg.appDir,
      env: { PATH: process.env.PATH, ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, ACMS_PROJECT: "local/tspkg" },
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
    expect(out.scopeId).toMatch(/^[0-9A-Z]{26}$/);
  },
  60_000,
);

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
