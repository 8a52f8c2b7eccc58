import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createAcmsClient, type AcmsClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const execAsync = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
const GO_CLIENT = join(ROOT, "clients/go");

/** The Go SDK's module path (clients/go/go.mod). */
const MODULE = "acmscontext.dev/go/acms";

let t: TestServer;
let acms: AcmsClient;
let work: string;
let agent: string;

/** Runs a command; on failure the error carries its whole output, so the jest log shows what Go said. */
async function run(
  file: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execAsync(file, args, { ...opts, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(" ")} exited with ${e.code}\n--- stdout\n${e.stdout ?? ""}\n--- stderr\n${e.stderr ?? ""}`);
  }
}

/** The environment the Go programs call the test server with (the agent reads ACMS_PROJECT). */
function serverEnv(key: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ACMS_URL: t.server.url, ACMS_API_KEY: key, ACMS_PROJECT: "local/goagent" };
}

/** What examples/agent prints against the project seeded below. */
function expectAgentOutput(stdout: string): void {
  const lines = stdout.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/goagent$/);
  expect(lines.slice(1)).toEqual([
    "text search: onboarding.md",
    "refused out of scope (PermissionDenied): 01ARZ3NDEKTSV4RRFFQ69G5FAV (scope projects local/goagent)",
    "bad request (InvalidArgument): fields query",
  ]);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "acms-go-"));
  agent = join(work, "agent");
  // Module mode: the pinned grpc and protobuf come from the Go module proxy (or the module cache).
  await run("go", ["build", "-o", agent, "./examples/agent"], { cwd: GO_CLIENT });
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
  if (work) rmSync(work, { recursive: true, force: true });
});

test("go test ./... in clients/go passes against the live server, every live test run (none skipped)", async () => {
  // -count=1: the server is new each run, so a cached result would prove nothing. The live tests seed their own
  // projects under ACMS_NAMESPACE with the writer's key (local/*).
  const { stdout } = await run("go", ["test", "-count=1", "-v", "./..."], {
    cwd: GO_CLIENT,
    env: { ...process.env, ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, ACMS_NAMESPACE: "local", ACMS_PROJECT: "local/goagent" },
  });
  expect(stdout).not.toContain("--- SKIP");
  const passed = [...stdout.matchAll(/^--- PASS: (TestLive\w+)/gm)].map((m) => m[1]).sort();
  expect(passed).toEqual([
    "TestLiveBadRequest",
    "TestLiveFragmentRoundTrip",
    "TestLiveHealthNeedsNoKey",
    "TestLivePagingHelpersWalkEveryPage",
    "TestLivePerCallKey",
    "TestLivePerCallScope",
    "TestLiveResolveScope",
    "TestLiveScopeViolation",
    "TestLiveTextSearch",
  ]);
  expect(stdout).toMatch(new RegExp(`^ok\\s+${MODULE.replace(/\./g, "\\.")}\\s`, "m"));
}, 600_000);

test("the Go example resolves a scope, searches it and reads ScopeViolationError and BadRequestError with errors.As", async () => {
  const { stdout } = await run(agent, ["onboarding checklist"], { env: serverEnv(t.keys.writer) });
  expectAgentOutput(stdout);
}, 60_000);

test("the Go example finds the server from ACMS_HOST and ACMS_PORT when ACMS_URL is unset", async () => {
  const { ACMS_URL: _unset, ...env } = serverEnv(t.keys.writer);
  const { stdout } = await run(agent, ["onboarding checklist"], {
    env: { ...env, ACMS_HOST: "127.0.0.1", ACMS_PORT: String(t.server.port) },
  });
  expectAgentOutput(stdout);
}, 60_000);

test("a Go module in an empty folder outside the repo depends on the SDK (a replace to this checkout, the rest from the module proxy), builds the README's snippet and runs the example", async () => {
  const user = mkdtempSync(join(tmpdir(), "acms-go-module-"));
  try {
    // The README's steps: go mod init, a replace to the checkout, the program, go mod tidy, go build.
    const env = { ...process.env, GOFLAGS: "-mod=mod" };
    await run("go", ["mod", "init", "example.com/agent"], { cwd: user, env });
    await run("go", ["mod", "edit", `-replace=${MODULE}=${GO_CLIENT}`], { cwd: user, env });
    copyFileSync(join(GO_CLIENT, "examples/agent/main.go"), join(user, "main.go"));
    // The README's usage snippet, as a second command of the same module: it must compile as printed.
    const snippet = /```go\n([\s\S]*?)```/.exec(readFileSync(join(GO_CLIENT, "README.md"), "utf8"))![1];
    mkdirSync(join(user, "readme"));
    writeFileSync(join(user, "readme/main.go"), snippet);
    await run("go", ["mod", "tidy"], { cwd: user, env });
    await run("go", ["vet", "./..."], { cwd: user, env });
    await run("go", ["build", "-o", "agent", "."], { cwd: user, env });
    const { stdout } = await run(join(user, "agent"), ["onboarding checklist"], { env: serverEnv(t.keys.writer) });
    expectAgentOutput(stdout);
  } finally {
    rmSync(user, { recursive: true, force: true });
  }
}, 600_000);

test("the Go example fails with one line on a wrong key", async () => {
  const failed = await execAsync(agent, [], { env: serverEnv("acms_wrong") }).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr.trim()).toBe("agent: rpc error: code = Unauthenticated desc = unknown API key");
}, 60_000);
