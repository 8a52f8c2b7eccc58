import { generateKey, hashKey } from "../application/access/key-ring.js";
import type { CliIo } from "./cli-io.js";
import { CliUsageError } from "./cli-usage-error.js";
import { defaultKeysFile, readKeysFileEntries, validatePrincipal, writeKeysFileEntries } from "./keys-file.js";

/** The body of `acms keys create`: a new key printed once, its hash appended to the keys file. */
export function createKey(io: CliIo, opts: { name: string; projects: string[]; write: boolean; file?: string; json?: boolean }): void {
  validatePrincipal(opts.name, opts.projects);
  const file = opts.file ?? defaultKeysFile(io.env);
  const entries = readKeysFileEntries(file);
  if (entries.some((e) => e.name === opts.name)) {
    throw new CliUsageError(`a principal named "${opts.name}" already exists in ${file}`);
  }
  const key = generateKey();
  entries.push({ name: opts.name, key_sha256: hashKey(key), projects: opts.projects, write: opts.write });
  writeKeysFileEntries(file, entries);
  if (opts.json) {
    io.stdout.write(`${JSON.stringify({ name: opts.name, key, projects: opts.projects, write: opts.write, file })}\n`);
    return;
  }
  io.stdout.write(
    `created principal ${opts.name} (projects: ${opts.projects.join(", ")}; ${opts.write ? "read-write" : "read-only"}) in ${file}\n` +
      `key (shown once, store it now): ${key}\n` +
      `use it with: export ACMS_API_KEY=${key}\n` +
      `the server reads this file when started with: acms serve --keys-file ${file} (or ACMS_KEYS_FILE); restart it to pick up new keys\n`,
  );
}

/** The body of `acms keys list`: names, access and projects, never keys. */
export function listKeys(io: CliIo, opts: { file?: string; json?: boolean }): void {
  const file = opts.file ?? defaultKeysFile(io.env);
  const entries = readKeysFileEntries(file).map((e) => ({ name: e.name, projects: e.projects, write: e.write }));
  if (opts.json) {
    io.stdout.write(`${JSON.stringify(entries)}\n`);
    return;
  }
  if (entries.length === 0) {
    io.stdout.write(`no principals in ${file}\n`);
    return;
  }
  const width = Math.max(4, ...entries.map((e) => e.name.length));
  io.stdout.write(`${"NAME".padEnd(width)}  ACCESS      PROJECTS\n`);
  for (const e of entries) {
    io.stdout.write(`${e.name.padEnd(width)}  ${(e.write ? "read-write" : "read-only").padEnd(10)}  ${e.projects.join(", ")}\n`);
  }
}
