import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { erasureImplemented, expectedLines, matches, SCENARIO_DIR, type Sdk } from "../clients/scenario/run-sdk-scenarios.js";
import { packedClientTarball } from "../clients/typescript-package/install-client-package.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// Issue 27's "done means": a Go, a Python and a TypeScript program, each in an empty folder outside the
// repository, depend on the SDK as its README says, run the shared scenario (clients/scenario/scenario.json)
// against a live server and pass. Each folder holds the scenario, the SDK's runner copied alone, and what the
// README's install steps made there; nothing else of the checkout is on the program's path:
// - Go (clients/go/README.md): `go mod init`, `go mod edit -replace` to the checkout's clients/go, `go mod tidy`
//   (grpc and protobuf from the Go module proxy or its cache), then `go test` runs the runner.
// - Python (clients/python/README.md): `python3 -m venv .venv`, `.venv/bin/pip install <checkout>/clients/python`
//   (hatchling and the dependencies from PyPI; pip's cache kept in $ACMS_CI_CACHE/pip), then `python
//   test_scenario.py` (the runner as a plain program: no pytest in that venv).
// - TypeScript (clients/typescript/README.md): `npm pack ./clients/typescript` (once per jest run, shared with the
//   package tests), `npm install <tarball>` in a project of its own (its dependencies from npm's cache, else the
//   registry), the runner's two imports of the checkout's sources turned into the package's, run by tsx.
// One server for the three; only the embedded project runs this file (the SDKs do not depend on the engine, and
// test/clients/scenario.test.ts runs the in-repository runners on every engine).

const exec = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
const MODULE = "acmscontext.dev/go/acms";
const CI_CACHE = process.env.ACMS_CI_CACHE ?? join(homedir(), ".cache/acms-ci");

let t: TestServer;
let erasure: boolean;

/** Runs a command; on failure the error carries its whole output, so the jest log shows what the tool said. */
async function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  try {
    const { stdout, stderr } = await exec(file, args, { cwd, env, maxBuffer: 64 << 20 });
    return `${stdout}\n${stderr}`;
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(" ")} (in ${cwd}) exited with ${e.code}\n--- stdout\n${e.stdout ?? ""}\n--- stderr\n${e.stderr ?? ""}`,
    );
  }
}

/** Runs the scenario program; its `ok N` / `FAIL N` lines whatever its exit status (the lines say what failed). */
async function runScenario(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const out = await new Promise<string>((resolve) =>
    execFile(file, args, { cwd, env, maxBuffer: 64 << 20 }, (_err, stdout, stderr) => resolve(`${stdout}\n${stderr}`)),
  );
  const lines = out.split("\n").filter((l) => /^(ok|FAIL) \d+ /.test(l));
  if (lines.length === 0) throw new Error(`the program printed no step:\n${out}`);
  return lines;
}

/** A fresh empty folder outside the checkout, holding a copy of scenario.json. */
function emptyFolder(sdk: Sdk): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `acms-${sdk}-user-`)));
  if (!relative(realpathSync(ROOT), dir).startsWith("..")) throw new Error(`${dir} is inside the checkout`);
  copyFileSync(join(SCENARIO_DIR, "scenario.json"), join(dir, "scenario.json"));
  return dir;
}

/** The environment each program runs the scenario with: the live server, a writer's key, a fresh project. */
function scenarioEnv(sdk: Sdk, dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ACMS_URL: t.server.url,
    ACMS_API_KEY: t.keys.writer,
    ACMS_PROJECT: `local/outside-${sdk}-${randomBytes(4).toString("hex")}`,
    ACMS_SCENARIO: join(dir, "scenario.json"),
    ACMS_TRACEPARENT: "",
  };
}

/** Go: the README's `replace` steps in an empty module, then the runner with `go test`. */
async function goProgram(dir: string): Promise<string[]> {
  await run("go", ["mod", "init", "example.com/acms-scenario"], dir);
  await run("go", ["mod", "edit", `-replace=${MODULE}=${join(ROOT, "clients/go")}`], dir);
  copyFileSync(join(SCENARIO_DIR, "go/scenario_test.go"), join(dir, "scenario_test.go"));
  await run("go", ["mod", "tidy"], dir);
  // tidy required the replaced module (a zero pseudo-version) next to grpc and protobuf.
  expect(readFileSync(join(dir, "go.mod"), "utf8")).toMatch(new RegExp(`^\\s*(require )?${MODULE.replace(/\./g, "\\.")} v0\\.0\\.0-`, "m"));
  return runScenario("go", ["test", "-count=1", "-v", "-run", "^TestScenario$", "."], dir, scenarioEnv("go", dir));
}

/** Python: a venv and `pip install <checkout>/clients/python`, as the README says; the runner as a program. */
async function pythonProgram(dir: string): Promise<string[]> {
  const pipEnv = { ...process.env, PIP_CACHE_DIR: join(CI_CACHE, "pip"), PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_NO_INPUT: "1" };
  await run(process.env.ACMS_PYTHON ?? "python3", ["-m", "venv", ".venv"], dir);
  await run(join(dir, ".venv/bin/pip"), ["install", "--quiet", join(ROOT, "clients/python")], dir, pipEnv);
  copyFileSync(join(SCENARIO_DIR, "python/test_scenario.py"), join(dir, "test_scenario.py"));
  // acms_client comes from the venv (site-packages), not from the checkout.
  const where = await run(join(dir, ".venv/bin/python"), ["-c", "import acms_client; print(acms_client.__file__)"], dir);
  expect(where.trim()).toContain(join(dir, ".venv"));
  return runScenario(join(dir, ".venv/bin/python"), ["test_scenario.py"], dir, {
    ...scenarioEnv("python", dir),
    PYTHONDONTWRITEBYTECODE: "1",
  });
}

/** The TypeScript runner as a user's project holds it: the package's import paths in place of the checkout's. */
function userRunner(): string {
  const source = readFileSync(join(SCENARIO_DIR, "typescript/run-scenario.ts"), "utf8");
  const imports: [string, string][] = [
    [`from "../../typescript/src/index.js"`, `from "@acms/client"`],
    [`from "../../../gen/acms/v1/tiers_pb.js"`, `from "@acms/client/gen/acms/v1/tiers_pb"`],
  ];
  let out = source;
  for (const [from, to] of imports) {
    if (!out.includes(from)) throw new Error(`run-scenario.ts no longer imports ${from}: update this test`);
    out = out.replace(from, to);
  }
  // Nothing else of the checkout: every other import is a package's or Node's.
  const relativeImports = [...out.matchAll(/from "(\.[^"]*)"/g)].map((m) => m[1]);
  expect(relativeImports).toEqual([]);
  return out;
}

const TS_MAIN = `import { readFileSync } from "node:fs";
import { acmsUrlFromEnv } from "@acms/client";
import { formatResult, runScenario, type Scenario } from "./run-scenario.js";

const scenario = JSON.parse(readFileSync(new URL("./scenario.json", import.meta.url), "utf8")) as Scenario;
const results = await runScenario(scenario, {
  baseUrl: acmsUrlFromEnv(),
  apiKey: process.env.ACMS_API_KEY ?? "",
  project: process.env.ACMS_PROJECT ?? "",
});
for (const r of results) console.log(formatResult(r));
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
`;

/** TypeScript: `npm install <the packed tarball>` in a project of its own; the runner and a main run by tsx. */
async function typescriptProgram(dir: string): Promise<string[]> {
  const tarball = await packedClientTarball();
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "acms-scenario", private: true, type: "module" }, null, 2));
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], dir);
  const installed = JSON.parse(readFileSync(join(dir, "node_modules/@acms/client/package.json"), "utf8")) as { name: string };
  expect(installed.name).toBe("@acms/client");
  writeFileSync(join(dir, "run-scenario.ts"), userRunner());
  writeFileSync(join(dir, "main.ts"), TS_MAIN);
  // The checkout's tsx (what `npx tsx` runs); it resolves @acms/client from the project's node_modules.
  return runScenario(process.execPath, [join(ROOT, "node_modules/tsx/dist/cli.mjs"), "main.ts"], dir, scenarioEnv("typescript", dir));
}

const PROGRAMS: Record<Sdk, (dir: string) => Promise<string[]>> = { go: goProgram, python: pythonProgram, typescript: typescriptProgram };

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4" } });
  erasure = await erasureImplemented(t.server.url, t.keys.writer);
}, 600_000);
afterAll(async () => {
  await t?.close(true);
});

test.each<Sdk>(["go", "python", "typescript"])(
  "a %s program in an empty folder outside the repository installs the SDK as its README says and passes the shared scenario",
  async (sdk) => {
    const dir = emptyFolder(sdk);
    try {
      const lines = await PROGRAMS[sdk](dir);
      expect({ sdk, lines, ok: matches(lines, expectedLines(erasure)) }).toEqual({ sdk, lines, ok: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  600_000,
);
