import { Command } from "commander";
import type { CliIo } from "./cli-io.js";

function collect(value: string, previous: string[]): string[] {
  return [
    ...previous,
    ...value
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  ];
}

/** Runs a keys body from `keys-actions.ts` (loaded only then), any failure one line on stderr. */
async function guarded(io: CliIo, body: (actions: typeof import("./keys-actions.js")) => void): Promise<void> {
  const [{ runGuarded }, actions] = await Promise.all([import("./cli-error.js"), import("./keys-actions.js")]);
  await runGuarded(
    io,
    () => undefined,
    async () => body(actions),
  );
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
    .action((opts: { name: string; projects: string[]; write: boolean; file?: string; json?: boolean }) =>
      guarded(io, (a) => a.createKey(io, opts)),
    );

  keys
    .command("list")
    .description("list the principals of the keys file (names, projects, write; never keys)")
    .option("--file <path>", "keys file (env ACMS_KEYS_FILE, default ./.acms/keys.json)")
    .option("--json", "print JSON instead of text")
    .action((opts: { file?: string; json?: boolean }) => guarded(io, (a) => a.listKeys(io, opts)));
  return keys;
}
