import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createAcmsClient, type AcmsClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const exec = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
/** Debian's interpreter, which has python3-grpcio and python3-protobuf (NOTES-TOOLCHAIN). */
const SYSTEM_PYTHON = "/usr/bin/python3";

let t: TestServer;
let acms: AcmsClient;
/** Holds the wheel, the venv and the folder the example runs in. */
let work: string;
/** The python of a fresh venv (over the system's grpcio) with the acms-client wheel installed: what a user runs. */
let PYTHON: string;

const DOCS = [
  { path: "onboarding.md", content: "# Onboarding\n\nNew engineers start with the onboarding checklist: laptop, accounts, and a buddy for the first week." },
  { path: "deploy.md", content: "# Deploying\n\nDeploys run from the release pipeline after review; roll back with the previous tag." },
  { path: "oncall.md", content: "# On-call\n\nThe on-call engineer answers pages within fifteen minutes and writes a short incident note." },
  { path: "style.md", content: "# Code style\n\nFormat with the project formatter; name files after their main export." },
];

/**
 * Builds the wheel offline from a copy of clients/python (so no build/ or egg-info lands in the tree) and
 * installs it into a fresh venv that sees Debian's grpcio and protobuf; pip resolves the declared
 * dependencies against those, with no index.
 */
async function installWheel(): Promise<void> {
  work = mkdtempSync(join(tmpdir(), "acms-python-pkg-"));
  cpSync(join(ROOT, "clients/python"), join(work, "src"), { recursive: true, filter: (f) => !f.includes("__pycache__") });
  await exec(SYSTEM_PYTHON, ["-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "--wheel-dir", join(work, "wheels"), join(work, "src")], { cwd: work });
  await exec(SYSTEM_PYTHON, ["-m", "venv", "--system-site-packages", join(work, "venv")]);
  PYTHON = join(work, "venv/bin/python");
  const wheels = readdirSync(join(work, "wheels"));
  await exec(PYTHON, ["-m", "pip", "install", "--no-index", ...wheels.map((w) => join(work, "wheels", w))], { cwd: work });
}

beforeAll(async () => {
  await installWheel();
  t = await startTestServer();
  // Data is prepared with the TypeScript client: the Python agent ingests nothing itself.
  acms = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  // One project per test, so the notes one test keeps in the tiers do not show up in the other's counts.
  for (const project of ["local/pyagent", "local/pycheck"]) {
    await acms.registry.createProject({ name: project });
    const { resource } = await acms.registry.registerResource({ project, alias: "handbook", kind: "docs" });
    await acms.index.upsertDocuments(
      (async function* () {
        yield { resourceId: resource!.id, documents: DOCS };
      })(),
    );
  }
}, 180_000);
afterAll(async () => {
  acms?.close();
  await t?.close(true);
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the wheel holds the typed package and its stubs, and the venv's python imports it from the venv", async () => {
  expect(readdirSync(join(work, "wheels"))).toEqual(["acms_client-0.1.0-py3-none-any.whl"]);
  const probe = [
    "import importlib.resources, acms_client",
    "from acms_client.gen.acms.v1 import errors_pb2, scope_pb2_grpc",
    "from acms_client.gen.google.rpc import status_pb2",
    "print(acms_client.__file__)",
    "print(importlib.resources.files('acms_client').joinpath('py.typed').is_file())",
    "print(importlib.resources.files('acms_client.gen.acms.v1').joinpath('scope_pb2.pyi').is_file())",
    "print(errors_pb2.ScopeViolation.DESCRIPTOR.full_name, status_pb2.Status.DESCRIPTOR.full_name)",
  ].join("\n");
  const { stdout } = await exec(PYTHON, ["-c", probe], { cwd: work });
  expect(stdout.trimEnd().split("\n")).toEqual([
    join(work, "venv/lib", readdirSync(join(work, "venv/lib"))[0], "site-packages/acms_client/__init__.py"),
    "True",
    "True",
    "acms.v1.ScopeViolation google.rpc.Status",
  ]);
}, 60_000);

test("the installed package's type hints check the example agent and catch a misuse (Debian's mypy)", async () => {
  const mypy = (file: string) =>
    exec("mypy", ["--python-executable", PYTHON, "--no-incremental", file], { cwd: work }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
  const agent = await mypy(join(ROOT, "clients/python/examples/example_agent.py"));
  expect(agent).toEqual({ code: 0, stdout: expect.stringContaining("Success: no issues found") });
  writeFileSync(
    join(work, "misuse.py"),
    ["from acms_client import AcmsClient", "", "def scope_number(acms: AcmsClient) -> int:", "    return acms.resolve_scope(['local/acms']).scope_id", ""].join("\n"),
  );
  const misuse = await mypy(join(work, "misuse.py"));
  expect(misuse.code).toBe(1);
  expect(misuse.stdout).toContain('Incompatible return value type (got "str", expected "int")');
}, 120_000);

function pythonEnv(project = "local/pyagent"): NodeJS.ProcessEnv {
  return { ...process.env, ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, ACMS_PROJECT: project, ACMS_OUTSIDE_PROJECT: "other/secret" };
}

test("the Python wrapper sets the headers and decodes ScopeViolation and BadRequest details", async () => {
  const { stdout } = await exec(PYTHON, [join(ROOT, "test/clients/python_client_check.py")], { env: pythonEnv("local/pycheck"), cwd: work });
  expect(stdout).not.toMatch(/^FAILED /m);
  expect(stdout).toContain("ok scope violation names the offender");
  expect(stdout).toContain("ok invalid argument names the field");
  expect(stdout.trimEnd().split("\n").pop()).toBe("all checks passed");
}, 60_000);

test("the example agent resolves a scope, searches, fetches in order and keeps notes in the tiers", async () => {
  // Run from outside the repository: acms_client can only come from the venv.
  const { stdout } = await exec(PYTHON, [join(ROOT, "clients/python/examples/example_agent.py"), "onboarding checklist"], { env: pythonEnv(), cwd: work });
  const lines = stdout.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/pyagent$/);
  expect(stdout).toMatch(/^hybrid search 'onboarding checklist': [1-5] results$/m);
  expect(stdout).toMatch(/^ {2}1\. [01]\.\d{4} uko:\/\/[0-9A-Z]{26}\/onboarding\.md#0 \(sources text/m);
  expect(stdout).toMatch(/^fetched [1-5] items in order: True; missing 0$/m);
  expect(stdout).toMatch(/^ {2}onboarding\.md: # Onboarding New engineers start with the onboarding checklist/m);
  expect(stdout).toMatch(/^stored note [0-9A-Z]{26} in hot \(\d+ tokens\)$/m);
  expect(stdout).toMatch(/^stored note [0-9A-Z]{26} in warm \(\d+ tokens\)$/m);
  expect(stdout).toMatch(/^read back [0-9A-Z]{26}: Question: onboarding checklist/m);
  expect(stdout).toContain("executor sees 2 notes, reviewer sees 1");
  expect(stdout).toMatch(/^tier metrics: hot 1 fragments\/\d+ tokens, warm 1, cold 0; hot hits 1$/m);
  expect(stdout).toContain("out-of-scope fetch refused: resources ['01ARZ3NDEKTSV4RRFFQ69G5FAV'], scope projects ['local/pyagent']");
}, 60_000);

test("the example agent fails with one line when the key is wrong", async () => {
  const failed = await exec(PYTHON, [join(ROOT, "clients/python/examples/example_agent.py")], {
    env: { ...pythonEnv(), ACMS_API_KEY: "acms_wrong" },
  }).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr.trim()).toBe("example_agent: unauthenticated: unknown API key");
}, 60_000);
