import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { sharedPerRun } from "../../support/run-shared.js";

const exec = promisify(execFile);
export const ROOT = join(__dirname, "..", "..", "..");
export const CLIENT_DIR = join(ROOT, "clients/typescript");

/** The packed client, installed into an empty folder the way a user's project installs it. */
export interface InstalledClient {
  /** The user's project: package.json and node_modules holding the client and its dependencies only. */
  appDir: string;
  /** The folder that holds the tarballs and appDir (remove it when done). */
  workDir: string;
  /** Paths inside the client tarball, as `npm pack` listed them. */
  packedFiles: string[];
  /** The dependencies the client's package.json declares, by name. */
  dependencies: Record<string, string>;
  /** The client's tarball, as `npm pack ./clients/typescript` wrote it (shared: read only). */
  tarball: string;
}

/**
 * The client package installed as a user installs it (see `packAndInstall`), in a fresh folder of the caller's
 * own: packed and installed once per jest run (the embedded and the duckdb project both run the client files),
 * and the installed project copied for each caller, who may write into it.
 */
export async function installClientPackage(): Promise<InstalledClient> {
  const shared = await sharedPerRun("client-package", packAndInstall);
  const workDir = mkdtempSync(join(tmpdir(), "acms-client-pkg-"));
  const appDir = join(workDir, "app");
  cpSync(shared.appDir, appDir, { recursive: true, verbatimSymlinks: true });
  return { ...shared, appDir, workDir };
}

/** The client's tarball, packed once per jest run (`packAndInstall`): what the README's `npm pack` writes. */
export async function packedClientTarball(): Promise<string> {
  return (await sharedPerRun("client-package", packAndInstall)).tarball;
}

/**
 * `npm pack`s clients/typescript (its prepack builds dist/), then installs that tarball into a fresh folder
 * with no network: its dependencies are packed from the repository's node_modules, so the install needs
 * neither the registry nor the npm cache (an offline install from the cache needs registry metadata the cache
 * does not hold). Throws when an installed dependency is not the version the client pins.
 */
async function packAndInstall(workDir: string): Promise<InstalledClient> {
  const { stdout } = await exec("npm", ["pack", "--json", "--pack-destination", workDir], { cwd: CLIENT_DIR, maxBuffer: 16 << 20 });
  // prepack's build output precedes npm's JSON on stdout.
  const packed = JSON.parse(stdout.slice(stdout.indexOf("\n[") + 1)) as { filename: string; files: { path: string }[] }[];
  const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const tarballs = [join(workDir, packed[0].filename)];
  for (const [name, version] of Object.entries(manifest.dependencies)) {
    const dir = join(ROOT, "node_modules", name);
    const installed = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
    if (installed !== version) throw new Error(`the client pins ${name}@${version} but the repository has ${installed}`);
    const out = await exec("npm", ["pack", "--json", "--pack-destination", workDir, dir], { cwd: workDir });
    tarballs.push(join(workDir, (JSON.parse(out.stdout) as { filename: string }[])[0].filename));
  }
  const appDir = join(workDir, "app");
  mkdirSync(appDir);
  writeFileSync(join(appDir, "package.json"), JSON.stringify({ name: "acms-client-user", private: true, type: "module" }));
  await exec("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs], { cwd: appDir });
  return { appDir, workDir, packedFiles: packed[0].files.map((f) => f.path), dependencies: manifest.dependencies, tarball: tarballs[0] };
}
