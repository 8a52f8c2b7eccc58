import { spawn } from "node:child_process";
import { CliUsageError } from "./cli-usage-error.js";

/** Embeds chunk texts: one vector per text, in order. */
export type Embedder = (texts: readonly string[]) => Promise<number[][]>;

/** How `createCommandEmbedder` runs the user's program. */
export interface CommandEmbedderOptions {
  /** The vector dimension every answer must have, when known (the server's, from `--embedding-dim`). */
  dimension?: number;
  /** Environment of the program (the CLI's own by default). */
  env?: NodeJS.ProcessEnv;
}

const MAX_STDERR_CHARS = 2_000;

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return lines[lines.length - 1].slice(0, 300);
}

/** Runs `command` through the shell once, with `input` on stdin; answers its stdout, or throws a one-line error. */
function runOnce(command: string, input: string, env: NodeJS.ProcessEnv | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, { shell: true, env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => {
      if (err.length < MAX_STDERR_CHARS) err += s;
    });
    child.on("error", (e) => reject(new CliUsageError(`--embed-command: cannot run "${command}": ${e.message}`)));
    child.on("close", (code, signal) => {
      if (code === 0) resolve(out);
      else {
        const why = signal ? `was killed by ${signal}` : `exited with status ${code}`;
        reject(new CliUsageError(`--embed-command ${why}${err.trim() ? `: ${lastLine(err)}` : ""}`));
      }
    });
    // A program that exits without reading all of its input is judged by its exit status and answer.
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

/**
 * An embedder that runs the user's own embedding program, `command` (through the shell), once per batch:
 * stdin holds one JSON string per line (the chunk texts, in order) and is then closed; the program answers
 * on stdout with one JSON array of numbers per line, in the same order, and exits 0. Every answer is
 * checked: as many vectors as texts, each a non-empty array of finite numbers that are not all zero, all of
 * one dimension (`dimension` when given, else the first answer's). Any other answer is a one-line error
 * naming what is wrong, so a broken model never writes a bad vector.
 * @example const embed = createCommandEmbedder("python3 embed.py", { dimension: 384 }); await embed(["some text"]);
 */
export function createCommandEmbedder(command: string, opts: CommandEmbedderOptions = {}): Embedder {
  let dimension = opts.dimension;
  return async (texts) => {
    if (texts.length === 0) return [];
    const input = texts.map((t) => `${JSON.stringify(t)}\n`).join("");
    const lines = (await runOnce(command, input, opts.env ?? process.env)).split("\n").filter((l) => l.trim().length > 0);
    if (lines.length !== texts.length) {
      throw new CliUsageError(
        `--embed-command answered ${lines.length} line${lines.length === 1 ? "" : "s"} for ${texts.length} chunk texts (one JSON array per line, in order)`,
      );
    }
    return lines.map((line, i) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new CliUsageError(`--embed-command answer ${i + 1} is not JSON: ${line.slice(0, 80)}`);
      }
      if (!Array.isArray(value) || value.length === 0)
        throw new CliUsageError(`--embed-command answer ${i + 1} is not a non-empty JSON array of numbers`);
      const bad = value.findIndex((x) => typeof x !== "number" || !Number.isFinite(x));
      if (bad >= 0)
        throw new CliUsageError(
          `--embed-command answer ${i + 1} holds a value that is not a finite number at index ${bad}: ${JSON.stringify(value[bad])}`,
        );
      const vector = value as number[];
      if (dimension === undefined) dimension = vector.length;
      if (vector.length !== dimension) {
        const expected =
          opts.dimension !== undefined
            ? `the server's dimension ${dimension} (--embedding-dim)`
            : `${dimension} like the answers before it`;
        throw new CliUsageError(`--embed-command answer ${i + 1} has ${vector.length} dimensions, expected ${expected}`);
      }
      if (vector.every((x) => x === 0))
        throw new CliUsageError(`--embed-command answer ${i + 1} is the zero vector, which has no direction to compare`);
      return vector;
    });
  };
}
