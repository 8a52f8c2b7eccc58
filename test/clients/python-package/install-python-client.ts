import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { sharedPerRun } from "../../support/run-shared.js";

const exec = promisify(execFile);
export const ROOT = join(__dirname, "..", "..", "..");
export const CLIENT = join(ROOT, "clients/python");

/** The acms-client wheel installed into a fresh venv outside the repository, as a user installs it. */
export interface InstalledPythonClient {
  /** Holds `wheels/` and `venv/` (read only: made once per jest run, shared by every file that installs it). */
  dir: string;
  /** The venv's python: acms_client from the wheel, with pytest, pytest-asyncio, mypy and the typing extra. */
  python: string;
}

/**
 * The venv of clients/python/requirements-dev.txt (grpcio-tools, hatchling, mypy...), made by dev-venv.sh once
 * per set of pins and kept outside the clone; its path.
 */
export async function devVenv(): Promise<string> {
  const { stdout } = await exec("bash", [join(CLIENT, "dev-venv.sh")]);
  return stdout.trim();
}

/**
 * The wheel built and installed into a venv once per jest run (sharedPerRun): the package files and the
 * server tests of every project use the same one.
 */
export async function installPythonClient(): Promise<InstalledPythonClient> {
  const { dir } = await sharedPerRun("python-client-venv", installWheel);
  return { dir, python: join(dir, "venv/bin/python") };
}

/**
 * Builds the wheel with the pinned hatchling of the dev venv (no build isolation: nothing unpinned is fetched),
 * then installs it into a fresh venv in `dir` from PyPI (pip's cache), every version held to
 * requirements-dev.txt by `-c`: the wheel's declared dependencies, its `typing` extra, and the test tools.
 */
async function installWheel(dir: string): Promise<{ dir: string }> {
  const dev = await devVenv();
  const pip = ["-m", "pip", "--disable-pip-version-check", "--no-input"];
  await exec(
    join(dev, "bin/python"),
    [...pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir", join(dir, "wheels"), CLIENT],
    { cwd: dir },
  );
  await exec(process.env.ACMS_PYTHON ?? "python3", ["-m", "venv", join(dir, "venv")]);
  const wheels = readdirSync(join(dir, "wheels")).map((w) => `${join(dir, "wheels", w)}[typing]`);
  const constraints = join(CLIENT, "requirements-dev.txt");
  await exec(
    join(dir, "venv/bin/python"),
    [...pip, "install", "--quiet", "--only-binary=:all:", "-c", constraints, ...wheels, "pytest", "pytest-asyncio", "mypy"],
    { cwd: dir },
  );
  return { dir };
}
