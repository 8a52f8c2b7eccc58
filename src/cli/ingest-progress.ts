import cliProgress from "cli-progress";
import type { CliOutput } from "./cli-io.js";

/** What an ingest reports while it runs. */
export interface IngestProgress {
  start(totalFiles: number): void;
  /** `files` more were processed (sent, unchanged or skipped); `chunks` is the running chunk total. */
  update(filesDone: number, chunks: number): void;
  /** Prints a line for the user (e.g. that Ctrl-C was heard); a live bar is ended first so the line stays readable. */
  note(line: string): void;
  stop(): void;
}

/**
 * Progress on `out`: a live bar (files, chunks, rate, ETA) when `out` is a terminal, otherwise one plain line
 * every `intervalMs`, so logs of CI jobs and redirected runs still show that work goes on.
 */
export function createIngestProgress(out: CliOutput, intervalMs = 2000): IngestProgress {
  if (out.isTTY && typeof (out as NodeJS.WriteStream).cursorTo === "function") {
    const bar = new cliProgress.SingleBar(
      {
        stream: out as NodeJS.WriteStream,
        format: "ingest {bar} {percentage}% | {value}/{total} files | {chunks} chunks | {rate} files/s | ETA {eta_formatted}",
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = 0;
    let live = false;
    return {
      start(total) {
        started = Date.now();
        live = true;
        bar.start(total, 0, { chunks: 0, rate: "0" });
      },
      update(done, chunks) {
        if (!live) return;
        const secs = Math.max(0.001, (Date.now() - started) / 1000);
        bar.update(done, { chunks, rate: (done / secs).toFixed(0) });
      },
      note(text) {
        if (live) bar.stop();
        live = false;
        out.write(`${text}\n`);
      },
      stop() {
        if (live) bar.stop();
        live = false;
      },
    };
  }
  let total = 0;
  let started = 0;
  let lastLine = 0;
  let last = { done: 0, chunks: 0 };
  const line = () => {
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    out.write(`ingest: ${last.done}/${total} files, ${last.chunks} chunks, ${(last.done / secs).toFixed(0)} files/s\n`);
  };
  return {
    start(t) {
      total = t;
      started = Date.now();
      lastLine = started;
    },
    update(done, chunks) {
      last = { done, chunks };
      if (Date.now() - lastLine >= intervalMs) {
        lastLine = Date.now();
        line();
      }
    },
    note(text) {
      out.write(`${text}\n`);
    },
    stop() {
      line();
    },
  };
}
