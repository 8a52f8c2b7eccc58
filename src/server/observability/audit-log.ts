import { createWriteStream, type WriteStream } from "node:fs";
import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../../gen/acms/v1/errors_pb.js";

/** One refused call, as written: who, which RPC, the code, and what was out of scope (ids and projects only). */
export interface AuditEntry {
  time: string;
  /** The key's name; null when the call had no valid key. */
  principal: string | null;
  rpc: string;
  code: string;
  /** The offending resource ids and project names of a ScopeViolation. */
  resource_ids?: string[];
  project_names?: string[];
  /** The projects of the call's scope, when a ScopeViolation names them. */
  scope_project_names?: string[];
  /** Quotas: which limit was passed. */
  limit?: string;
}

/** The codes that mean "refused": audited. */
const REFUSALS: ReadonlySet<Code> = new Set([Code.Unauthenticated, Code.PermissionDenied, Code.ResourceExhausted]);

/**
 * An append-only log of refused calls, one JSON object per line, to a file or stderr (ACMS_AUDIT_LOG: a
 * path, or `stderr`). It records identities, never request content: no queries, paths, documents or keys.
 */
export class AuditLog {
  private constructor(
    private readonly write: (line: string) => void,
    private readonly stream?: WriteStream,
  ) {}

  /** `target`: a file path (appended to), or "stderr". */
  static open(target: string): AuditLog {
    if (target === "stderr") return new AuditLog((line) => process.stderr.write(line));
    const stream = createWriteStream(target, { flags: "a" });
    return new AuditLog((line) => stream.write(line), stream);
  }

  /** Records `err` when it refuses the call (other codes are not audited). */
  refused(principal: string | undefined, rpc: string, err: ConnectError): void {
    if (!REFUSALS.has(err.code)) return;
    const entry: AuditEntry = { time: new Date().toISOString(), principal: principal ?? null, rpc, code: Code[err.code] };
    const [violation] = err.findDetails(ScopeViolationSchema);
    if (violation) {
      entry.resource_ids = violation.resourceIds;
      entry.project_names = violation.projectNames;
      entry.scope_project_names = violation.scopeProjectNames;
    }
    if (err.code === Code.ResourceExhausted) entry.limit = err.rawMessage.replace(/^Over quota: /, "").slice(0, 200);
    this.write(`${JSON.stringify(entry)}\n`);
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    const stream = this.stream;
    if (!stream) return Promise.resolve();
    return new Promise((resolve) => stream.end(() => resolve()));
  }
}
