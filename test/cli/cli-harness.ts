import { Command, CommanderError } from "commander";
import type { CliIo } from "../../src/cli/cli-io.js";
import { createProgram } from "../../src/cli/program.js";

/** What one CLI run printed and its exit status. */
export interface CliRun {
  stdout: string;
  stderr: string;
  code: number;
}

function quiet(cmd: Command, io: CliIo): void {
  cmd.exitOverride();
  cmd.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  for (const sub of cmd.commands) quiet(sub, io);
}

/**
 * Runs `acms <args>` in-process through the real program (the same commander tree `bin/acms.js` runs), with
 * `env` as its whole environment and stdout/stderr captured; usage errors become exit status 1 instead of
 * ending the test process.
 */
export async function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  let code = 0;
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s), isTTY: false },
    stderr: { write: (s: string) => (stderr += s), isTTY: false },
    env: { ...env },
    setExitCode: (c) => {
      code = c;
    },
  };
  const program = createProgram(io);
  quiet(program, io);
  try {
    await program.parseAsync(["node", "acms", ...args]);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    code = err.exitCode === 0 ? 0 : 1;
  }
  return { stdout, stderr, code };
}
