import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { CliIo } from "./cli-io.js";
import { CliUsageError } from "./cli-usage-error.js";
import { createCommandEmbedder } from "./command-embedder.js";
import type { ConnectedBody } from "./connection-options.js";
import { ingestDirectory, type IngestEmbedding, type IngestSummary } from "./ingest-directory.js";
import { createIngestProgress } from "./ingest-progress.js";
import { defaultStatePath } from "./ingest-state.js";
import { DEFAULT_EMBED_BATCH, DEFAULT_MAX_FILE_BYTES } from "./ingest-defaults.js";
import { parseIntFlag } from "./parse-numbers.js";

/** The largest --max-file-bytes: the server refuses documents over 4 MiB. */
const MAX_FILE_BYTES_LIMIT = 4 * 1024 * 1024;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function describe(s: IngestSummary, dir: string, maxFileBytes: number): string {
  const skipped: string[] = [];
  if (s.filesUnchanged > 0) skipped.push(`${s.filesUnchanged} unchanged since the last run`);
  if (s.skippedBinary > 0) skipped.push(`${s.skippedBinary} binary`);
  if (s.skippedEmpty > 0) skipped.push(`${s.skippedEmpty} empty`);
  if (s.skippedTooLarge > 0) skipped.push(`${s.skippedTooLarge} over ${maxFileBytes} bytes`);
  if (s.skippedBadName > 0) skipped.push(`${s.skippedBadName} with unusable names`);
  if (s.skippedUnreadable > 0) skipped.push(`${s.skippedUnreadable} unreadable`);
  if (s.symlinksNotFollowed > 0) skipped.push(`${s.symlinksNotFollowed} symlinks not followed`);
  const created = [s.createdProject ? "project created" : "", s.createdResource ? "resource registered" : ""].filter(Boolean);
  const lines = [
    `${s.interrupted ? "interrupted" : "ingested"} ${dir} into ${s.project}:${s.alias} (resource ${s.resourceId}${created.length > 0 ? `; ${created.join(", ")}` : ""})`,
    `  files: ${s.filesFound} found, ${s.filesSent} sent${skipped.length > 0 ? `, skipped: ${skipped.join(", ")}` : ""}`,
    `  indexed: ${plural(s.documentsUpserted, "document")}, ${plural(s.chunksIndexed, "chunk")}` +
      `${s.documentsDeleted > 0 ? `, ${s.documentsDeleted} pruned` : ""} in ${s.seconds.toFixed(1)} s` +
      ` (${(s.filesSent / Math.max(0.001, s.seconds)).toFixed(0)} files/s)` +
      `${s.indexGeneration ? `, index generation ${s.indexGeneration}` : ""}`,
  ];
  if (s.rejected.length > 0) {
    lines.push(`  refused by the server: ${s.rejected.length} file${s.rejected.length === 1 ? "" : "s"}`);
    for (const r of s.rejected.slice(0, 5)) lines.push(`    ${r.path}: ${r.reason}`);
    if (s.rejected.length > 5) lines.push(`    … and ${s.rejected.length - 5} more (--json lists them all)`);
  }
  if (s.interrupted) lines.push("  run the same command again to resume: confirmed files are not sent twice");
  return `${lines.join("\n")}\n`;
}

/** The client-side embedding `--embed-command` asks for, its flags checked; undefined without it. */
function embeddingOf(io: CliIo, o: { embedCommand?: string; embedBatchSize?: string; embeddingDim?: string }): IngestEmbedding | undefined {
  if (o.embedCommand === undefined) {
    if (o.embedBatchSize !== undefined) throw new CliUsageError("--embed-batch-size needs --embed-command");
    return undefined;
  }
  const command = o.embedCommand.trim();
  if (command.length === 0) throw new CliUsageError("--embed-command must not be empty");
  const batchSize = parseIntFlag("--embed-batch-size", o.embedBatchSize) ?? DEFAULT_EMBED_BATCH;
  if (batchSize < 1) throw new CliUsageError("--embed-batch-size must be at least 1");
  const rawDim = o.embeddingDim ?? (io.env.ACMS_EMBEDDING_DIM || undefined);
  const dimension = parseIntFlag("--embedding-dim", rawDim);
  if (dimension !== undefined && dimension < 1) throw new CliUsageError("--embedding-dim must be at least 1");
  return {
    embedder: createCommandEmbedder(command, { dimension, env: io.env }),
    batchSize,
    stateTag: `embed:${createHash("sha256").update(command).digest("hex").slice(0, 16)}`,
  };
}

/** The body of `acms ingest <dir>`; `handleSignals: false` leaves SIGINT alone (tests). */
export const ingest =
  (io: CliIo, opts: { handleSignals?: boolean }): ConnectedBody<[string]> =>
  async ({ conn, client, cmd }, dirArg) => {
    const o = cmd.opts<{
      project: string;
      alias: string;
      kind: string;
      include: string[];
      exclude: string[];
      maxFileBytes?: string;
      prune?: boolean;
      force?: boolean;
      stateFile?: string;
      embedCommand?: string;
      embedBatchSize?: string;
      embeddingDim?: string;
    }>();
    const dir = resolve(dirArg);
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory();
    } catch {
      throw new CliUsageError(`no such folder: ${dirArg}`);
    }
    if (!isDir) throw new CliUsageError(`not a folder: ${dirArg}`);
    const maxFileBytes = parseIntFlag("--max-file-bytes", o.maxFileBytes) ?? DEFAULT_MAX_FILE_BYTES;
    if (maxFileBytes < 1 || maxFileBytes > MAX_FILE_BYTES_LIMIT) {
      throw new CliUsageError(`--max-file-bytes must be between 1 and ${MAX_FILE_BYTES_LIMIT}`);
    }
    for (const g of [...o.include, ...o.exclude]) {
      if (g.trim() === "" || g.startsWith("/") || g.split("/").includes("..")) {
        throw new CliUsageError(`globs are relative to the folder, without '..': "${g}"`);
      }
    }

    const embed = embeddingOf(io, o);

    const stop = new AbortController();
    const progress = createIngestProgress(io.stderr);
    let interrupts = 0;
    const onSigint = () => {
      interrupts++;
      if (interrupts === 1) {
        progress.note("acms: stopping after the batch in flight (Ctrl-C again to quit now)");
        stop.abort();
      } else {
        io.stderr.write("acms: interrupted; re-run to resume\n");
        process.exit(130);
      }
    };
    if (opts.handleSignals !== false) process.on("SIGINT", onSigint);
    try {
      const summary = await ingestDirectory(
        client,
        {
          dir,
          project: o.project,
          alias: o.alias,
          kind: o.kind,
          include: o.include,
          exclude: o.exclude,
          maxFileBytes,
          prune: o.prune === true,
          force: o.force === true,
          url: conn.url,
          statePath: (resourceId) => (o.stateFile ? resolve(o.stateFile) : defaultStatePath(io.env, conn.url, resourceId)),
          signal: stop.signal,
          embed,
        },
        progress,
      );
      if (conn.json) io.stdout.write(`${JSON.stringify(summary)}\n`);
      else io.stdout.write(describe(summary, dirArg, maxFileBytes));
      if (summary.interrupted) io.setExitCode(130);
    } finally {
      if (opts.handleSignals !== false) process.off("SIGINT", onSigint);
    }
  };
