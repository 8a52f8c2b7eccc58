import { Command } from "commander";
import { runGuarded, CliUsageError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { generateKey, hashKey } from "../server/key-ring.js";
import { defaultKeysFile, readKeysFileEntries, validatePrincipal, writeKeysFileEntries } from "./keys-file.js";

function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(",").map((s) => s.trim()).filter((s) => s.length > 0)];
}

/**
 * `acms keys create|list`: manages principals in the server's keys file without a running server. A key is
 * printed once at creation and only its SHA-256 is stored; the server reads the file when it starts.
 */
export function keysCommand(io: CliIo): Command {
  const keys = new Command("keys").description("create and list principals (API keys) in the keys file");

  keys
    .command("create")
    .description("generate an API key for a new principal, print it once and store its hash")
    .requiredOption("--name <name>", "principal name (unique in the file)")
    .option("--projects <globs>", "project globs the key may touch, e.g. 'local/*' (repeatable or comma-separated)", collect, [])
    .option("--write", "allow registry and index writes on those projects", false)
    .option("--file <path>", "keys file (env ACMS_KEYS_FILE, default ./.acms/keys.json)")
    .option("--json", "print JSON instead of text")
    .action(async (opts: { name: string; projects: string[]; write: boolean; file?: string; json?: boolean }) => {
      await runGuarded(io, () => undefined, async () => {
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
      });
    });

  keys
    .command("list")
    .description("list the principals of the keys file (names, projects, write; never keys)")
    .option("--file <path>", "keys file (env ACMS_KEYS_FILE, default ./.acms/keys.json)")
    .option("--json", "print JSON instead of text")
    .action(async (opts: { file?: string; json?: boolean }) => {
      await runGuarded(io, () => undefined, async () => {
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
      });
    });
  return keys;
}
