import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { readKeysJson, type KeyEntry } from "../application/access/key-ring.js";
import { CliUsageError } from "./cli-usage-error.js";

/** The keys file used when neither `--file` nor `ACMS_KEYS_FILE` names one: inside the default data directory. */
export function defaultKeysFile(env: NodeJS.ProcessEnv): string {
  if (env.ACMS_KEYS_FILE) return resolve(env.ACMS_KEYS_FILE);
  return resolve(env.ACMS_DATA_DIR || ".acms", "keys.json");
}

/** Reads the keys file; a missing file is an empty list, a malformed one an error naming the file. */
export function readKeysFileEntries(path: string): KeyEntry[] {
  const json = readKeysJson(path, true);
  if (json === undefined) return [];
  if (!Array.isArray(json)) throw new Error(`keys file ${path} must hold a JSON array`);
  return json.map((raw, i) => {
    const e = raw as Partial<KeyEntry> | null;
    if (!e || typeof e.name !== "string" || typeof e.key_sha256 !== "string" || !Array.isArray(e.projects)) {
      throw new Error(`keys file ${path}: entry ${i} needs "name", "key_sha256" and "projects"`);
    }
    return { name: e.name, key_sha256: e.key_sha256, projects: e.projects.map(String), write: e.write === true };
  });
}

/** Writes the keys file atomically (a temporary file renamed over it), readable by its owner only. */
export function writeKeysFileEntries(path: string, entries: KeyEntry[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${process.pid}.${randomBytes(4).toString("hex")}.keys.tmp`);
  writeFileSync(tmp, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;
const PROJECT_GLOB = /^[a-z0-9*?[\]{},._-]+\/[a-z0-9*?[\]{},._-]+$/;

/** Checks a principal's name and project globs before anything is written. */
export function validatePrincipal(name: string, projects: string[]): void {
  if (!NAME.test(name)) throw new CliUsageError(`--name must be 1-128 letters, digits, '.', '_', '@' or '-', got "${name}"`);
  if (projects.length === 0) throw new CliUsageError("--projects needs at least one glob, e.g. 'local/*'");
  for (const p of projects) {
    if (!PROJECT_GLOB.test(p)) throw new CliUsageError(`--projects: "${p}" is not a glob over namespace/name, e.g. 'local/*'`);
  }
}
