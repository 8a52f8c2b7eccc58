import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { installPythonClient, ROOT, type InstalledPythonClient } from "./python-package/install-python-client.js";

// The Python client package itself, with no server: the wheel's contents and its type hints. Its calls to a
// server are python-client.test.ts (run in the embedded and duckdb projects); these depend on no engine, so they
// run once.

const exec = promisify(execFile);

let pkg: InstalledPythonClient;
/** The folder mypy runs in, this file's own. */
let work: string;

beforeAll(async () => {
  pkg = await installPythonClient();
  work = mkdtempSync(join(tmpdir(), "acms-python-pkg-"));
}, 180_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the wheel holds the typed package and its stubs, and the venv's python imports it from the venv", async () => {
  expect(readdirSync(join(pkg.dir, "wheels"))).toEqual(["acms_client-0.1.0-py3-none-any.whl"]);
  const probe = [
    "import importlib.resources, acms_client",
    "from acms_client.gen.acms.v1 import errors_pb2, scope_pb2_grpc",
    "from acms_client.gen.google.rpc import status_pb2",
    "print(acms_client.__file__)",
    "print(importlib.resources.files('acms_client').joinpath('py.typed').is_file())",
    "print(importlib.resources.files('acms_client.gen.acms.v1').joinpath('scope_pb2.pyi').is_file())",
    "print(errors_pb2.ScopeViolation.DESCRIPTOR.full_name, status_pb2.Status.DESCRIPTOR.full_name)",
  ].join("\n");
  const { stdout } = await exec(pkg.python, ["-c", probe], { cwd: work });
  expect(stdout.trimEnd().split("\n")).toEqual([
    join(pkg.dir, "venv/lib", readdirSync(join(pkg.dir, "venv/lib"))[0], "site-packages/acms_client/__init__.py"),
    "True",
    "True",
    "acms.v1.ScopeViolation google.rpc.Status",
  ]);
}, 60_000);

test("the installed package's type hints check the example agent and catch a misuse (Debian's mypy)", async () => {
  const mypy = (file: string) =>
    exec("mypy", ["--python-executable", pkg.python, "--no-incremental", file], { cwd: work }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
  const agent = await mypy(join(ROOT, "clients/python/examples/example_agent.py"));
  expect(agent).toEqual({ code: 0, stdout: expect.stringContaining("Success: no issues found") });
  writeFileSync(
    join(work, "misuse.py"),
    [
      "from acms_client import AcmsClient",
      "",
      "def scope_number(acms: AcmsClient) -> int:",
      "    return acms.resolve_scope(['local/acms']).scope_id",
      "",
    ].join("\n"),
  );
  const misuse = await mypy(join(work, "misuse.py"));
  expect(misuse.code).toBe(1);
  expect(misuse.stdout).toContain('Incompatible return value type (got "str", expected "int")');
}, 120_000);
