import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CLIENT, installPythonClient, type InstalledPythonClient } from "./python-package/install-python-client.js";

// The Python client package itself, with no server: the wheel's contents, its type hints under mypy --strict, and
// the test suite skipping cleanly without a server. Its calls to a server are python-client.test.ts (run in every
// engine project); these depend on no engine, so they run once.

const exec = promisify(execFile);

let pkg: InstalledPythonClient;
/** The folder the venv's tools run in, outside the repository. */
let work: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return exec(pkg.python, args, { cwd: work, env: { ...env, PYTHONDONTWRITEBYTECODE: "1" }, maxBuffer: 16 * 1024 * 1024 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** mypy --strict from the venv (the pinned mypy and stub packages), over files of the repository or of `work`. */
function mypyStrict(files: string[]): Promise<Run> {
  return run(["-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", ...files]);
}

beforeAll(async () => {
  pkg = await installPythonClient();
  work = mkdtempSync(join(tmpdir(), "acms-python-pkg-"));
}, 600_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the wheel holds the typed package, its typed stubs and its licence, and the venv imports it from the venv", async () => {
  expect(readdirSync(join(pkg.dir, "wheels"))).toEqual(["acms_client-0.2.0-py3-none-any.whl"]);
  const probe = [
    "import importlib.metadata as md, importlib.resources as res, acms_client",
    "from acms_client.gen.acms.v1 import errors_pb2, scope_pb2_grpc",
    "print(acms_client.__file__)",
    "print(res.files('acms_client').joinpath('py.typed').is_file())",
    "print(sorted(f.name for f in res.files('acms_client.gen.acms.v1').iterdir() if f.name.startswith('scope_')))",
    "print(md.metadata('acms-client')['License-Expression'], md.requires('acms-client'))",
    "print(errors_pb2.ScopeViolation.DESCRIPTOR.full_name)",
  ].join("\n");
  const { code, stdout, stderr } = await run(["-c", probe]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const lines = stdout.trimEnd().split("\n");
  expect(lines[0]).toBe(join(pkg.dir, "venv/lib", readdirSync(join(pkg.dir, "venv/lib"))[0], "site-packages/acms_client/__init__.py"));
  expect(lines.slice(1, 3)).toEqual(["True", "['scope_pb2.py', 'scope_pb2.pyi', 'scope_pb2_grpc.py', 'scope_pb2_grpc.pyi']"]);
  expect(lines[3]).toBe(
    `Apache-2.0 ['googleapis-common-protos<2,>=1.63', 'grpcio<2,>=1.85.1', 'protobuf<8,>=7.35.1', "types-grpcio>=1.85; extra == 'typing'", "types-protobuf>=7.35; extra == 'typing'"]`,
  );
  expect(lines[4]).toBe("acms.v1.ScopeViolation");
}, 60_000);

test("mypy --strict passes on the examples and the tests, against the installed package", async () => {
  const checked = await mypyStrict([join(CLIENT, "examples"), join(CLIENT, "tests")]);
  expect(checked).toEqual({ code: 0, stdout: expect.stringMatching(/^Success: no issues found in \d+ source files\n$/), stderr: "" });
}, 180_000);

test("the installed types catch misuse: a wrong result type, a repeated field as the wrong type, an unknown tier", async () => {
  writeFileSync(
    join(work, "misuse.py"),
    [
      "from acms_client import AcmsClient, AsyncAcmsClient",
      "",
      "def scope_number(acms: AcmsClient) -> int:",
      "    return acms.resolve_scope(['local/acms']).scope.scope_id",
      "",
      "def paths(acms: AcmsClient) -> list[int]:",
      "    return [r.path for r in acms.search('q').results]",
      "",
      "def tier(acms: AcmsClient) -> None:",
      "    acms.store_fragment('x', project_name='local/acms', tier='lukewarm')",
      "",
      "async def not_awaited(acms: AsyncAcmsClient) -> str:",
      "    return acms.get_scope('01').scope.scope_id",
      "",
    ].join("\n"),
  );
  const misuse = await mypyStrict([join(work, "misuse.py")]);
  expect(misuse.code).toBe(1);
  expect(misuse.stdout).toContain('misuse.py:4: error: Incompatible return value type (got "str", expected "int")');
  expect(misuse.stdout).toContain("misuse.py:7: error: List comprehension has incompatible type List[str]; expected List[int]");
  expect(misuse.stdout).toMatch(
    /misuse\.py:10: error: Argument "tier" to "store_fragment" of "AcmsClient" has incompatible type "Literal\['lukewarm'\]"/,
  );
  expect(misuse.stdout).toMatch(/misuse\.py:13: error: "Coroutine\[Any, Any, GetScopeResponse\]" has no attribute "scope"/);
}, 180_000);

test("without ACMS_URL the live tests skip cleanly and the rest pass", async () => {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ACMS_URL;
  const { code, stdout } = await run(["-m", "pytest", "-p", "no:cacheprovider", "-q", join(CLIENT, "tests")], env);
  expect(code).toBe(0);
  expect(stdout.trimEnd().split("\n").pop()).toMatch(/^\d+ passed, \d+ skipped in /);
  expect(stdout).not.toMatch(/failed|error/i);
}, 120_000);
