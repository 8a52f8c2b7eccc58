import { InvalidArgumentError, type FieldViolation } from "./errors.js";
import { metadataViolations } from "./metadata-limits.js";
import { projectNameProblem } from "./project-name.js";
import { aliasProblem } from "./resource-alias.js";
import { isUlid, resourceIdProblem } from "./ulid-id.js";

/** Limits on what RegisterResource stores, so one request cannot bloat the registry. */
export const RESOURCE_LIMITS = {
  maxKindLength: 64,
  maxParents: 256,
} as const;

/** Kinds and metadata are labels: control characters would only corrupt logs and listings. */
function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** What RegisterResource asks for, before the server picks an id. */
export interface ResourceRequest {
  project: string;
  alias: string;
  kind: string;
  parentIds: readonly string[];
  metadata: Readonly<Record<string, string>>;
  /** Empty lets the server assign one. */
  id: string;
}

/**
 * Every field violation of a RegisterResource request at once (project, alias, kind, id, parent_ids,
 * metadata), so a client fixes them in one round trip. Existence checks are the store's.
 */
export function resourceRequestViolations(req: ResourceRequest): FieldViolation[] {
  const out: FieldViolation[] = [];
  const projectProblem = projectNameProblem(req.project);
  if (projectProblem) out.push({ field: "project", description: projectProblem });
  const aliasWhy = aliasProblem(req.alias);
  if (aliasWhy) out.push({ field: "alias", description: aliasWhy });
  if (req.kind.trim().length === 0) out.push({ field: "kind", description: "the kind is empty (e.g. repo, docs, dataset)" });
  else if (req.kind.length > RESOURCE_LIMITS.maxKindLength)
    out.push({ field: "kind", description: `the kind is longer than ${RESOURCE_LIMITS.maxKindLength} characters` });
  else if (hasControlChar(req.kind)) out.push({ field: "kind", description: "the kind contains control characters" });
  if (req.id.length > 0 && !isUlid(req.id))
    out.push({ field: "id", description: `"${req.id.slice(0, 80)}" is not a ULID (leave it empty to have one assigned)` });
  if (req.parentIds.length > RESOURCE_LIMITS.maxParents)
    out.push({ field: "parent_ids", description: `more than ${RESOURCE_LIMITS.maxParents} parents` });
  req.parentIds.forEach((p, i) => {
    const problem = resourceIdProblem(p);
    if (problem) out.push({ field: `parent_ids[${i}]`, description: problem });
    else if (p === req.id) out.push({ field: `parent_ids[${i}]`, description: "a resource cannot be its own parent" });
  });
  out.push(...metadataViolations("metadata", req.metadata));
  return out;
}

/** Throws INVALID_ARGUMENT listing every bad field of a RegisterResource request. */
export function assertResourceRequest(req: ResourceRequest): void {
  const violations = resourceRequestViolations(req);
  if (violations.length > 0) throw new InvalidArgumentError(violations);
}
