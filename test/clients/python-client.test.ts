import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAcmsClient, type AcmsClient } from "../../src/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { CLIENT, installPythonClient } from "./python-package/install-python-client.js";

let t: TestServer;
let acms: AcmsClient;
/** The folder the Python processes run in, outside the repository: acms_client can only come from the venv. */
let work: string;
/** The python of a fresh venv with the acms-client wheel, pytest and mypy installed: what a user runs. */
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

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `args` with the venv's python in `work`; asynchronous, since the server answering it runs in this process. */
function python(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      PYTHON,
      args,
      { cwd: work, env: { ...env, PYTHONDONTWRITEBYTECODE: "1" }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The environment of a process that reaches the test server by ACMS_URL, with the writer's key. */
function serverEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ACMS_HOST;
  delete env.ACMS_PORT;
  return { ...env, ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, ...extra };
}

beforeAll(async () => {
  PYTHON = (await installPythonClient()).python;
  work = mkdtempSync(join(tmpdir(), "acms-python-client-"));
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4" } });
  // The examples ingest nothing: their project is prepared with the TypeScript client.
  acms = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  await acms.registry.createProject({ name: "local/pyagent" });
  const { resource } = await acms.registry.registerResource({ project: "local/pyagent", alias: "handbook", kind: "docs" });
  await acms.index.upsertDocuments(
    (async function* () {
      yield { resourceId: resource!.id, documents: DOCS };
    })(),
  );
}, 600_000);
afterAll(async () => {
  acms?.close();
  await t?.close(true);
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the pytest suite of clients/python passes against the live server, sync and asyncio, with nothing skipped", async () => {
  const run = await python(
    ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", join(CLIENT, "tests")],
    serverEnv({
      ACMS_PROJECT: "local/pysdk",
      ACMS_OUTSIDE_PROJECT: "other/secret",
      ACMS_EMBEDDING_DIM: "4",
    }),
  );
  if (run.code !== 0) throw new Error(`pytest failed (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  const summary = run.stdout.trimEnd().split("\n").pop() ?? "";
  expect(summary).toMatch(/^\d+ passed in /);
  expect(Number(/^(\d+) passed/.exec(summary)![1])).toBeGreaterThanOrEqual(60);
}, 300_000);

test("the blocking example resolves a scope, searches, fetches in order and keeps notes in the tiers", async () => {
  const run = await python(
    [join(CLIENT, "examples/example_agent.py"), "onboarding checklist"],
    serverEnv({ ACMS_PROJECT: "local/pyagent" }),
  );
  expect(run).toMatchObject({ code: 0, stderr: "" });
  const { stdout } = run;
  expect(stdout.split("\n")[0]).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/pyagent$/);
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
}, 120_000);

test("the asyncio example runs its searches concurrently, streams one and reads a refusal", async () => {
  const run = await python([join(CLIENT, "examples/example_async.py"), "engineer"], serverEnv({ ACMS_PROJECT: "local/pyagent" }));
  expect(run).toMatchObject({ code: 0, stderr: "" });
  const lines = run.stdout.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/pyagent$/);
  expect(lines).toContain("text: ['onboarding.md', 'oncall.md']");
  expect(lines).toContain("graph: 0 triples in scope");
  expect(lines.filter((l) => /^streamed [01]\.\d{4} uko:\/\/[0-9A-Z]{26}\/(onboarding|oncall)\.md#0$/.test(l))).toHaveLength(2);
  expect(lines[lines.length - 1]).toBe("refused: projects ['other/secret'] are not in ['local/pyagent']");
}, 120_000);

test("without ACMS_URL the examples dial ACMS_HOST and ACMS_PORT, as the CLI does", async () => {
  const env = serverEnv({ ACMS_PROJECT: "local/pyagent", ACMS_HOST: "127.0.0.1", ACMS_PORT: String(t.server.port) });
  delete env.ACMS_URL;
  const run = await python([join(CLIENT, "examples/example_async.py"), "deploys"], env);
  expect(run).toMatchObject({ code: 0, stderr: "" });
  expect(run.stdout).toMatch(/^scope [0-9A-Z]{26}: 1 resources in local\/pyagent$/m);
}, 120_000);

test("the examples fail with one line when the key is wrong or missing", async () => {
  const wrong = await python([join(CLIENT, "examples/example_agent.py")], serverEnv({ ACMS_API_KEY: "acms_wrong" }));
  expect(wrong).toEqual({ code: 1, stdout: "", stderr: "example_agent: unauthenticated: unknown API key\n" });
  const missing = await python([join(CLIENT, "examples/example_async.py")], serverEnv({ ACMS_API_KEY: "" }));
  expect(missing.code).toBe(1);
  expect(missing.stderr).toBe("example_async: set ACMS_API_KEY (the key `acms serve` printed, or one from `acms keys create`)\n");
}, 120_000);
