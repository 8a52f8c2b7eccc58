/** A stream the CLI writes to: process.stdout/stderr, or a capture in tests. */
export interface CliOutput {
  write(text: string): unknown;
  /** Whether a person is watching (progress bars and colours only then). */
  isTTY?: boolean;
  /** Terminal width, when known. */
  columns?: number;
}

/**
 * Where a command reads its environment and writes its output, so commands run the same from the shell and
 * from tests (which capture the output and the exit code instead of exiting).
 */
export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
  env: NodeJS.ProcessEnv;
  /** Records the process exit status (non-zero on failure). */
  setExitCode(code: number): void;
}

/** The real process: its stdout, stderr, environment and exit status. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    setExitCode(code) {
      process.exitCode = code;
    },
  };
}

/** The width tables are laid out to: the terminal's, else `COLUMNS`, else 160. */
export function outputWidth(io: CliIo): number {
  const fromEnv = Number(io.env.COLUMNS);
  return io.stdout.columns ?? (Number.isInteger(fromEnv) && fromEnv >= 40 ? fromEnv : 160);
}
