import { ScopeViolationError } from "./errors.js";

/** Everything one ScopeViolation reports: the offenders and what they were checked against. */
export interface ScopeOffenders {
  /** The projects the check allowed (the scope's, or the key's globs): the detail's `scope_project_names`. */
  available: readonly string[];
  /** Projects outside it. */
  projects?: readonly string[];
  /** Resources outside it. */
  resources?: readonly string[];
  /** Units (UKO URIs) of in-scope resources that path filters exclude (named in the reason only). */
  paths?: readonly string[];
  /** What the offenders are outside of, as the reason says it: "scope" (the default) or `key "<name>"`. */
  of?: string;
  /** A reason of its own, for violations that are not a list of offenders (a revoked or emptied scope). */
  reason?: string;
  /** The error message, when it says more than the reason (defaults to the reason). */
  message?: string;
}

function list(values: readonly string[]): string {
  return values.length > 0 ? values.join(", ") : "(none)";
}

/**
 * The one builder of ScopeViolation errors, so every check words its reason alike and fills the detail
 * the same way: "Projects not in scope: a, b. Available: c; Resources not in scope: X; Paths excluded
 * by the scope's path filters: uko://…", naming every offender at once.
 * @example throw scopeViolation({ available: view.projectNames, resources: ["01J…"] });
 */
export function scopeViolation(o: ScopeOffenders): ScopeViolationError {
  const projects = o.projects ?? [];
  const resources = o.resources ?? [];
  const paths = o.paths ?? [];
  const of = o.of ?? "scope";
  let reason = o.reason;
  if (reason === undefined) {
    const parts: string[] = [];
    if (projects.length > 0) parts.push(`Projects not in ${of}: ${projects.join(", ")}. Available: ${list(o.available)}`);
    if (resources.length > 0) parts.push(`Resources not in ${of}: ${resources.join(", ")}`);
    if (paths.length > 0) parts.push(`Paths excluded by the ${of}'s path filters: ${paths.join(", ")}`);
    reason = parts.join("; ");
  }
  return new ScopeViolationError(o.message ?? reason, {
    resourceIds: [...resources],
    scopeProjectNames: [...o.available],
    projectNames: [...projects],
    reason,
  });
}
