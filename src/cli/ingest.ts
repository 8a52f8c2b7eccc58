import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";
import { DEFAULT_EMBED_BATCH, DEFAULT_MAX_FILE_BYTES } from "./ingest-defaults.js";

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * `acms ingest <dir>`: indexes a folder as a resource of a project (see `ingestDirectory`), with a
 * progress bar on a terminal. Ctrl-C stops after the stream in flight is confirmed; a second Ctrl-C quits at once.
 * The body is in `ingest-action.ts`, loaded only when it runs.
 */
export function ingestCommand(io: CliIo, opts: { handleSignals?: boolean } = {}): Command {
  return addConnectionOptions(
    new Command("ingest")
      .description("index a folder as a resource of a project (respects .gitignore; resumable)")
      .argument("<dir>", "the folder to index")
      .requiredOption("--project <name>", "project namespace/name (created when missing)")
      .requiredOption("--alias <alias>", "the resource's alias in the project (registered when missing)")
      .option("--kind <kind>", "kind of a newly registered resource", "docs")
      .option("--include <glob>", "only files matching these globs, e.g. '**/*.md' (repeatable)", collect, [])
      .option("--exclude <glob>", "leave out files matching these globs (repeatable)", collect, [])
      .option("--max-file-bytes <n>", `skip files larger than this (default ${DEFAULT_MAX_FILE_BYTES})`)
      .option("--prune", "delete documents an earlier run of this folder sent whose files are gone")
      .option("--force", "re-send every file, ignoring what earlier runs recorded")
      .option("--state-file <path>", "where to record finished files (default: under ~/.cache/acms/ingest)")
      .option(
        "--embed-command <cmd>",
        "embed each chunk with your own program: chunk texts as JSON lines on stdin, one JSON array per line on stdout (README)",
      )
      .option("--embed-batch-size <n>", `chunk texts per run of --embed-command (default ${DEFAULT_EMBED_BATCH})`)
      .option("--embedding-dim <n>", "the server's vector dimension, to check answers before sending (env ACMS_EMBEDDING_DIM)"),
    { scoped: false },
  ).action(connectedAction(io, async () => (await import("./ingest-action.js")).ingest(io, opts)));
}
