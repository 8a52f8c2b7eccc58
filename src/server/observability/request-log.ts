import type { LogLevel } from "../composition/config.js";
import type { InternalErrorSink } from "../transport/error-mapping.js";

/** Where log lines go: anything with a `write`, process.stderr by default. */
export interface LogOutput {
  write(line: string): unknown;
}

/** The fields of one finished call's log line: names, code and timing only, never content or keys. */
export interface CallLogEntry {
  requestId: string;
  service: string;
  method: string;
  /** gRPC code name, e.g. "ok", "permission_denied". */
  code: string;
  durationMs: number;
  /** The principal's name from the keys file, once authenticated. */
  principal?: string;
}

/**
 * Structured JSON logs, one object per line. Calls are logged when they fail or are refused (every call at
 * level "debug"); internal errors are logged with the request id of the call they happened in, as the
 * error's class and stack frames only: its message can quote stored content, so it is never written.
 */
export class RequestLog {
  constructor(
    readonly level: LogLevel = "info",
    private readonly out: LogOutput = process.stderr,
  ) {}

  /** Logs a finished call: always when it failed, only at level debug when it succeeded. */
  call(entry: CallLogEntry, failed: boolean): void {
    if (!failed && this.level !== "debug") return;
    this.line({
      level: !failed ? "debug" : entry.code === "internal" || entry.code === "unknown" ? "error" : "info",
      msg: "call",
      request_id: entry.requestId,
      service: entry.service,
      method: entry.method,
      code: entry.code,
      duration_ms: Math.round(entry.durationMs * 1000) / 1000,
      principal: entry.principal,
    });
  }

  /**
   * The sink for errors that are not domain errors (bugs, driver failures), given the request id of the call
   * they happened in. The id is passed in, not read from an AsyncLocalStorage: on Node 20 an active
   * AsyncLocalStorage installs a promise hook that every promise of every call pays for.
   */
  readonly internalError: InternalErrorSink = (err, requestId) => {
    const stack =
      err instanceof Error && err.stack
        ? err.stack
            .split("\n")
            .filter((l) => /^\s+at /.test(l))
            .map((l) => l.trim())
        : [];
    this.line({
      level: "error",
      msg: "internal error",
      request_id: requestId,
      error: err instanceof Error ? err.constructor.name : typeof err,
      stack,
    });
  };

  private line(fields: Record<string, unknown>): void {
    this.out.write(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
  }
}
