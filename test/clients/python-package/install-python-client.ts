import { execFile } from "node:child_process";
import { cpSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { sharedPerRun } from "../../support/run-shared.js";

const exec = promisify(execFile);
export const ROOT = join(__dirname, "..", "..", "..");
/** Debian's interpreter, which has python3-grpcio and python3-protobuf (NOTES-TOOLCHAIN). */
const SYSTEM_PYTHON = "/usr/bin/python3";

/** The acms-client wheel installed into a venv, as a user installs it. */
export interface InstalledPythonClient {
  /** Holds `wheels/` and `venv/` (read only: made once per jest run, shared by every file that installs it). */
  dir: string;
  /** The venv's python. */
  python: string;
}

/**
 * The wheel built and installed into a venv once per jest run (sharedPerRun): the package files and the
 * server tests of both projects use the same one.
 */
export async function installPythonClient(): Promise<InstalledPythonClient> {
  const { dir } = await sharedPerRun("python-client-venv", installWheel);
  return { dir, python: join(dir, "venv/bin/python") };
}

/**
 * Builds the wheel offline from a copy of clients/python (so no build/ or egg-info lands in the tree) and
 * installs it into a fresh venv in `dir` that sees Debian's grpcio and protobuf; pip resolves the declared
 * dependencies against those, with no index.
 */
async function installWheel(dir: string): Promise<{ dir: string }> {
  cpSync(join(ROOT, "clients/python"), join(dir, "src"), { recursive: true, filter: (f) => !f.includes("__pycache__") });
  await exec(
    SYSTEM_PYTHON,
    ["-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "--wheel-dir", join(dir, "wheels"), join(dir, "src")],
    { cwd: dir },
  );
  await exec(SYSTEM_PYTHON, ["-m", "venv", "--system-site-packages", join(dir, "venv")]);
  const wheels = readdirSync(join(dir, "wheels"));
  await exec(join(dir, "venv/bin/python"), ["-m", "pip", "install", "--no-index", ...wheels.map((w) => join(dir, "wheels", w))], {
    cwd: dir,
  });
  return { dir };
}
