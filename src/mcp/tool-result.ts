import { Code, ConnectError } from "@connectrpc/connect";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { findFieldViolations } from "../../clients/typescript/src/find-bad-request.js";
import { findScopeViolation } from "../../clients/typescript/src/find-scope-violation.js";

/** The gRPC name of a code as the wire spells it: `PERMISSION_DENIED`, `INVALID_ARGUMENT`. */
export function grpcCodeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** A tool's answer: its structured content, and the same as JSON text for clients that read text only. */
export function toolSuccess(structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
}

/** What a refused call carries: the ScopeViolation's fields (the offenders and the scope's projects). */
export interface Refusal {
  code: "PERMISSION_DENIED";
  message: string;
  resource_ids: string[];
  project_names: string[];
  scope_project_names: string[];
  reason?: string;
}

/** A refusal as a tool result: `isError`, text naming the offenders, the ScopeViolation's fields as structured content. */
export function refusalResult(refusal: Refusal): CallToolResult {
  const parts: string[] = [];
  if (refusal.resource_ids.length > 0) parts.push(`offending resources: ${refusal.resource_ids.join(", ")}`);
  if (refusal.project_names.length > 0) parts.push(`offending projects: ${refusal.project_names.join(", ")}`);
  parts.push(`scope projects: ${refusal.scope_project_names.join(", ") || "(none)"}`);
  const text = `PERMISSION_DENIED: ${refusal.message} [${parts.join("; ")}]`;
  return { content: [{ type: "text", text }], structuredContent: { ...refusal }, isError: true };
}

/**
 * Any failure of an RPC as a tool result (`isError`): PERMISSION_DENIED with a ScopeViolation becomes a
 * refusal (see `refusalResult`); every other error carries its gRPC code name, its message and, for
 * INVALID_ARGUMENT, the fields at fault (`renamed` maps a wire field name to the tool argument it came from,
 * say `max_results` to `top_k`). A model reads the text; a program reads `structuredContent.code`.
 */
export function errorResult(err: unknown, renamed: Readonly<Record<string, string>> = {}): CallToolResult {
  const e = ConnectError.from(err);
  const rename = (text: string) => Object.entries(renamed).reduce((t, [wire, arg]) => t.split(wire).join(arg), text);
  const message = rename(e.rawMessage);
  const violation = findScopeViolation(e);
  if (e.code === Code.PermissionDenied) {
    return refusalResult({
      code: "PERMISSION_DENIED",
      message,
      resource_ids: [...(violation?.resourceIds ?? [])],
      project_names: [...(violation?.projectNames ?? [])],
      scope_project_names: [...(violation?.scopeProjectNames ?? [])],
      ...(violation?.reason ? { reason: violation.reason } : {}),
    });
  }
  const code = grpcCodeName(e.code);
  const fields = findFieldViolations(e).map((f) => ({ field: rename(f.field), description: rename(f.description) }));
  const detail = fields.filter((f) => !message.includes(f.field)).map((f) => `${f.field}: ${f.description}`);
  const text = `${code}: ${message}${detail.length > 0 ? ` [${detail.join("; ")}]` : ""}`;
  const structured: Record<string, unknown> = { code, message };
  if (fields.length > 0) structured.field_violations = fields;
  return { content: [{ type: "text", text }], structuredContent: structured, isError: true };
}
