import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createAcmsClient, type AcmsClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const exec = promisify(execFile);
const ROOT = join(__dirname, "..", "..");

let t: TestServer;
let acms: AcmsClient;
/** A GOPATH whose src/acms/clients/go is this repository's clients/go, beside Debian's /usr/share/gocode. */
let gopath: string;
let agent: string;

/**
 * Builds clients/go/examples/agent the way NOTES-TOOLCHAIN says Debian's Go works: GOPATH mode (no modules
 * can be downloaded), against the packaged grpc, protobuf and genproto sources in /usr/share/gocode.
 */
async function buildAgent(): Promise<void> {
  gopath = mkdtempSync(join(tmpdir(), "acms-gopath-"));
  mkdirSync(join(gopath, "src/acms/clients"), { recursive: true });
  symlinkSync(join(ROOT, "clients/go"), join(gopath, "src/acms/clients/go"));
  agent = join(gopath, "bin/agent");
  // -trimpath: without it Go hashes each package's folder into its build-cache key, so the client's package, in a
  // fresh temporary GOPATH each run, would be compiled again by every run (the duckdb project runs this file too).
  await exec("go", ["build", "-trimpath", "-o", agent, "acms/clients/go/examples/agent"], {
    cwd: gopath,
    env: { ...process.env, GO111MODULE: "off", GOPATH: `${gopath}:/usr/share/gocode`, GOFLAGS: "" },
  });
}

beforeAll(async () => {
  await buildAgent();
  t = await startTestServer();
  acms = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  await acms.registry.createProject({ name: "local/goagent" });
  const { resource } = await acms.registry.registerResource({ project: "local/goagent", alias: "handbook", kind: "docs" });
  await acms.index.upsertDocuments(
    (async function* () {
      yield {
        resourceId: resource!.id,
        documents: [
          { path: "onboarding.md", content: "# Onboarding\n\nNew engineers start with the onboarding checklist and a buddy." },
          { path: "deploy.md", content: "# Deploying\n\nDeploys run from the release pipeline after review." },
        ],
      };
    })(),
  );
}, 600_000);
afterAll(async () => {
  acms?.close();
  await t?.close(true);
  if (gopath) rmSync(gopath, { recursive: true, force: true });
});

test("the Go example resolves a scope, searches it and decodes ScopeViolation and BadRequest from the status details", async () => {
  const { stdout } = await exec(agent, ["onboarding checklist"], {
    env: { PATH: process.env.PATH, ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, ACMS_PROJECT: "local/goagent" },
  });
  const lines = stdout.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/goagent$/);
  expect(lines.slice(1)).toEqual([
    "text search: onboarding.md",
    "refused out of scope (PermissionDenied): 01ARZ3NDEKTSV4RRFFQ69G5FAV (scope projects local/goagent)",
    "bad request (InvalidArgument): fields query",
  ]);
}, 60_000);

test("a Go module in an empty folder requires acms/clients/go (a replace to this checkout), vendors Debian's sources offline and calls the server", async () => {
  const user = mkdtempSync(join(tmpdir(), "acms-go-module-"));
  try {
    copyFileSync(join(ROOT, "clients/go/examples/agent/main.go"), join(user, "main.go"));
    // The client's own requirements (Debian's versions), then the client itself, replaced by this checkout.
    const requires = /^require \(\n([\s\S]*?)^\)/m.exec(readFileSync(join(ROOT, "clients/go/go.mod"), "utf8"))![1];
    writeFileSync(
      join(user, "go.mod"),
      `module example.com/agent\n\ngo 1.19\n\nrequire (\n\tacms/clients/go v0.0.0\n${requires})\n\nreplace acms/clients/go => ${join(ROOT, "clients/go")}\n`,
    );
    await exec("bash", [join(ROOT, "clients/go/vendor-debian.sh"), user]);
    const env = { ...process.env, GO111MODULE: "on", GOFLAGS: "-mod=vendor", GOPROXY: "off", GOPATH: join(user, ".gopath") };
    // -trimpath: the vendored grpc and protobuf sources sit in a fresh folder each run, and without it their folder
    // is part of their build-cache key (each run compiled them all again, over a minute).
    await exec("go", ["build", "-trimpath", "-o", "agent", "."], { cwd: user, env });
    const { stdout } = await exec(join(user, "agent"), ["onboarding checklist"], {
      env: { PATH: process.env.PATH, ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, ACMS_PROJECT: "local/goagent" },
    });
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/goagent$/);
    expect(lines.slice(1)).toEqual([
      "text search: onboarding.md",
      "refused out of scope (PermissionDenied): 01ARZ3NDEKTSV4RRFFQ69G5FAV (scope projects local/goagent)",
      "bad request (InvalidArgument): fields query",
    ]);
  } finally {
    rmSync(user, { recursive: true, force: true });
  }
}, 600_000);

test("the Go example fails with one line on a wrong key", async () => {
  const failed = await exec(agent, [], {
    env: { PATH: process.env.PATH, ACMS_URL: t.server.url, ACMS_API_KEY: "acms_wrong", ACMS_PROJECT: "local/goagent" },
  }).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr.trim()).toBe("agent: rpc error: code = Unauthenticated desc = unknown API key");
}, 60_000);
