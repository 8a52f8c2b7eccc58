import { Code, ConnectError } from "@connectrpc/connect";
// From their own modules, not the client package's index: the index brings every transport (node:http2,
// zlib...) into any command that can fail, `acms search text` included.
import { findFieldViolations } from "../../clients/typescript/src/find-bad-request.js";
import { findScopeViolation } from "../../clients/typescript/src/find-scope-violation.js";
import type { CliIo } from "./cli-io.js";
import { CliUsageError } from "./cli-usage-error.js";

/** The canonical gRPC name of a code, e.g. `permission_denied`. */
function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

function isConnectionFailure(err: ConnectError): boolean {
  if (err.code !== Code.Unavailable && err.code !== Code.Unknown && err.code !== Code.Internal) return false;
  return /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ECONNRESET|EAI_AGAIN|socket hang up|ERR_HTTP2/i.test(err.rawMessage);
}

/**
 * The one line a failure prints: `acms: <code>: <message>`, with the offending ids of a ScopeViolation and
 * the fields of a BadRequest, so a person (or a script reading stderr) sees what to fix without a stack trace.
 */
export function formatCliError(err: unknown, url?: string): string {
  if (err instanceof ConnectError) {
    if (isConnectionFailure(err)) {
      return `acms: unavailable: cannot reach the server${url ? ` at ${url}` : ""} (${err.rawMessage}); is \`acms serve\` running?`;
    }
    let line = `acms: ${codeName(err.code)}: ${err.rawMessage.replace(/\s+/g, " ").trim()}`;
    const violation = findScopeViolation(err);
    if (violation) {
      const parts: string[] = [];
      if (violation.resourceIds.length > 0) parts.push(`offending resources: ${violation.resourceIds.join(", ")}`);
      if (violation.projectNames.length > 0) parts.push(`offending projects: ${violation.projectNames.join(", ")}`);
      if (violation.scopeProjectNames.length > 0) parts.push(`scope projects: ${violation.scopeProjectNames.join(", ")}`);
      if (parts.length > 0) line += ` [${parts.join("; ")}]`;
    }
    const fields = findFieldViolations(err);
    const unnamed = fields.filter((f) => !line.includes(f.field));
    if (unnamed.length > 0) line += ` [${unnamed.map((f) => `${f.field}: ${f.description}`).join("; ")}]`;
    return line;
  }
  if (err instanceof CliUsageError) return `acms: invalid_argument: ${err.message}`;
  const message = err instanceof Error ? err.message : String(err);
  return `acms: error: ${message.split("\n")[0]}`;
}

/**
 * Runs a command body, turning any failure into one line on stderr and exit status 1 (never a stack trace).
 * Returns the exit status.
 */
export async function runGuarded(io: CliIo, url: () => string | undefined, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return 0;
  } catch (err) {
    io.stderr.write(`${formatCliError(err, url())}\n`);
    io.setExitCode(1);
    return 1;
  }
}
