import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createAcmsClient, type AcmsClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { installPythonClient, ROOT } from "./python-package/install-python-client.js";

const exec = promisify(execFile);

let t: TestServer;
let acms: AcmsClient;
/** The folder the examples run in, this file's own. */
let work: string;
/** The python of a fresh venv (over the system's grpcio) with the acms-client wheel installed: what a user runs. */
let PYTHON: string;

const DOCS = [
  {
    path: "onboarding.md",
    content: "# Onboarding\n\nNew engineers start with the onboarding checklist: laptop, accounts, and a buddy for the first week.",
  },
  { path: "deploy.md", content: "# Deploying\n\nDeploys run from the release pipeline after review; roll back with the previous tag." },
  {
    path: "oncall.md",
    content: "# On-call\n\nThe on-call engineer answers pages within fifteen minutes and writes a short incident note.",
  },
  { path: "style.md", content: "# Code style\n\nFormat with the project formatter; name files after their main export." },
];

beforeAll(async () => {
  PYTHON = (await installPythonClient()).python;
  work = mkdtempSync(join(tmpdir(), "acms-python-pkg-"));
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

function pythonEnv(project = "local/pyagent"): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ACMS_URL: t.server.url,
    ACMS_API_KEY: t.keys.writer,
    ACMS_PROJECT: project,
    ACMS_OUTSIDE_PROJECT: "other/secret",
  };
}

test("the Python wrapper sets the headers and decodes ScopeViolation and BadRequest details", async () => {
  const { stdout } = await exec(PYTHON, [join(ROOT, "test/clients/python_client_check.py")], {
    env: pythonEnv("local/pycheck"),
    cwd: work,
  });
  expect(stdout).not.toMatch(/^FAILED /m);
  expect(stdout).toContain("ok scope violation names the offender");
  expect(stdout).toContain("ok invalid argument names the field");
  expect(stdout.trimEnd().split("\n").pop()).toBe("all checks passed");
}, 60_000);

test("the example agent resolves a scope, searches, fetches in order and keeps notes in the tiers", async () => {
  // Run from outside the repository: acms_client can only come from the venv.
  const { stdout } = await exec(PYTHON, [join(ROOT, "clients/python/examples/example_agent.py"), "onboarding checklist"], {
    env: pythonEnv(),
    cwd: work,
  });
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
