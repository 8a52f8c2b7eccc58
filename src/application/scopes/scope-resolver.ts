import { InvalidArgumentError, NotFoundError, ResourceExhaustedError, type FieldViolation } from "../../domain/errors.js";
import type { Principal } from "../../domain/principal.js";
import { projectNameProblem } from "../../domain/project-name.js";
import { TEMPORAL_SCOPES, type ResourceScope, type TemporalScope } from "../../domain/scope.js";
import { scopeGlobViolations } from "../../domain/scope-glob-budget.js";
import { narrowScopeResources, resolveScopeResources } from "../../domain/scope-resolution.js";
import { isUlid, newUlid, resourceIdProblem } from "../../domain/ulid-id.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import { MAX_SCOPE_PAGE, type ScopeStore, type ScopeUsage } from "../../ports/scope-store.js";
import { decodePageToken, encodePageToken, pageSizeOf } from "../../domain/page-token.js";
import { resourceVisibility } from "../registry/resource-visibility.js";

/** Caps on list sizes, so one request cannot make a scope arbitrarily expensive to resolve or store. */
export const SCOPE_LIMITS = { maxProjects: 256, maxResourceNames: 1024, maxGlobs: 256, maxDenyIds: 4096 } as const;

/**
 * How much one principal may keep in the scope store (ACMS_MAX_SCOPES_PER_PRINCIPAL,
 * ACMS_MAX_SCOPE_BYTES_PER_PRINCIPAL): scopes are kept for good, so without a cap a read-only key filled the
 * disk (8.4 MiB/s with chains of large scopes).
 */
export interface StoredScopeCaps {
  maxScopes: number;
  /** Bytes of the stored scopes (their bodies in UTF-8). */
  maxBytes: number;
}

/** The defaults: far above what a plan a minute for years needs, far below a full disk. */
export const DEFAULT_STORED_SCOPE_CAPS: StoredScopeCaps = { maxScopes: 10_000, maxBytes: 64 * 1024 * 1024 };

/** The RetryInfo delay of a refusal at the cap: stored scopes stay, so only an operator's change helps soon. */
const CAP_RETRY_AFTER_MS = 60_000;

/** What ResolveScope asks for (the wire's fields; an empty `temporalScope` means "current"). */
export interface ResolveScopeInput {
  projects: readonly string[];
  includeResources: readonly string[];
  excludeResources: readonly string[];
  includePaths: readonly string[];
  excludePaths: readonly string[];
  temporalScope: string;
  /** Absent: true. */
  expandDescendants?: boolean;
}

/** What NarrowScope asks for, applied to the parent scope. */
export interface NarrowScopeInput {
  /** Empty: the parent's projects. */
  projects: readonly string[];
  denyResourceIds: readonly string[];
  excludePaths: readonly string[];
}

function tooMany(field: string, list: readonly unknown[], max: number, out: FieldViolation[]): void {
  if (list.length > max) out.push({ field, description: `more than ${max} entries` });
}

function parseTemporal(value: string, out: FieldViolation[]): TemporalScope {
  if (value === "") return "current";
  if ((TEMPORAL_SCOPES as readonly string[]).includes(value)) return value as TemporalScope;
  out.push({ field: "temporal_scope", description: `"${value.slice(0, 40)}" is not one of ${TEMPORAL_SCOPES.join(", ")}` });
  return "current";
}

/**
 * The scope use cases: a scope is resolved once from projects and filters, stored immutably under a ULID
 * and owned by the principal that made it; narrowing makes a child that can only see less. Every front end
 * (gRPC, Connect, MCP, console) calls these, so the checks and caps are the same whatever the caller uses.
 * Field names in violations are the wire's.
 * @example const scope = await resolver.resolve(principal, { projects: ["local/api"], includeResources: [], excludeResources: [], includePaths: [], excludePaths: [], temporalScope: "" });
 */
export class ScopeResolver {
  constructor(
    private readonly registry: RegistryStore,
    private readonly scopes: ScopeStore,
    private readonly caps: StoredScopeCaps = DEFAULT_STORED_SCOPE_CAPS,
  ) {}

  /**
   * RESOURCE_EXHAUSTED (with RetryInfo, as every quota refusal) when `principal` already holds its cap of
   * stored scopes. Checked before the scope is built (a refused call costs no resolution), and again by the
   * store in the save itself (`saveUnderCaps`), so calls racing past this first check never overshoot.
   */
  private async assertUnderCaps(principal: Principal): Promise<void> {
    const usage = await this.scopes.usageOf(principal.name);
    if (usage.scopes >= this.caps.maxScopes || usage.bytes >= this.caps.maxBytes) throw this.overCap(usage);
  }

  private overCap(usage: ScopeUsage): ResourceExhaustedError {
    if (usage.scopes >= this.caps.maxScopes) {
      return new ResourceExhaustedError(
        `Over quota: the key holds ${usage.scopes} stored scopes, the most one principal may keep (${this.caps.maxScopes}); ` +
          "reuse a scope instead of resolving a new one per call",
        CAP_RETRY_AFTER_MS,
      );
    }
    return new ResourceExhaustedError(
      `Over quota: the key's stored scopes take ${usage.bytes} bytes, the most one principal may keep (${this.caps.maxBytes}); ` +
        "reuse a scope instead of resolving a new one per call",
      CAP_RETRY_AFTER_MS,
    );
  }

  /** Stores `scope` if its owner is still under the caps, atomically with the check (RESOURCE_EXHAUSTED if not). */
  private async saveUnderCaps(scope: ResourceScope): Promise<void> {
    const stored = await this.scopes.save(scope, { scopes: this.caps.maxScopes, bytes: this.caps.maxBytes });
    if (!stored) throw this.overCap(await this.scopes.usageOf(scope.owner));
  }

  /** Resolves and stores a new scope owned by `principal` (INVALID_ARGUMENT, NOT_FOUND for unknown projects). */
  async resolve(principal: Principal, req: ResolveScopeInput): Promise<ResourceScope> {
    const violations: FieldViolation[] = [];
    if (req.projects.length === 0) violations.push({ field: "projects", description: "at least one project is required" });
    tooMany("projects", req.projects, SCOPE_LIMITS.maxProjects, violations);
    req.projects.forEach((p, i) => {
      const problem = projectNameProblem(p);
      if (problem) violations.push({ field: `projects[${i}]`, description: problem });
    });
    tooMany("include_resources", req.includeResources, SCOPE_LIMITS.maxResourceNames, violations);
    tooMany("exclude_resources", req.excludeResources, SCOPE_LIMITS.maxResourceNames, violations);
    tooMany("include_paths", req.includePaths, SCOPE_LIMITS.maxGlobs, violations);
    tooMany("exclude_paths", req.excludePaths, SCOPE_LIMITS.maxGlobs, violations);
    // Globs are compiled only when their lists are within the count (a refused list costs no compilation).
    if (req.includePaths.length <= SCOPE_LIMITS.maxGlobs && req.excludePaths.length <= SCOPE_LIMITS.maxGlobs) {
      violations.push(
        ...scopeGlobViolations([
          { field: "include_paths", patterns: req.includePaths },
          { field: "exclude_paths", patterns: req.excludePaths },
        ]),
      );
    }
    const temporalScope = parseTemporal(req.temporalScope, violations);
    if (violations.length > 0) throw new InvalidArgumentError(violations);
    await this.assertUnderCaps(principal);
    const registry = this.registry;
    const projects = [...new Set(req.projects)];
    const found = await Promise.all(projects.map((p) => registry.getProject(p)));
    const missing = projects.filter((_, i) => !found[i]);
    if (missing.length > 0) throw new NotFoundError(`project${missing.length > 1 ? "s" : ""} not found: ${missing.join(", ")}`);
    const expandDescendants = req.expandDescendants ?? true;
    // Several registry reads, each its own: see ScopeResolutionInput for what a racing write can do.
    const resolved = await resolveScopeResources({
      projects,
      links: await registry.linksOfProjects(projects),
      withDescendants: (ids) => registry.withDescendants(ids),
      visible: resourceVisibility(registry, principal),
      includeResources: req.includeResources,
      excludeResources: req.excludeResources,
      expandDescendants,
    });
    const scope: ResourceScope = {
      scopeId: newUlid(),
      owner: principal.name,
      resourceIds: resolved.resourceIds,
      projectNames: projects,
      temporalScope,
      includeResources: [...req.includeResources],
      excludeResources: [...req.excludeResources],
      includePaths: [...req.includePaths],
      excludePaths: [...req.excludePaths],
      parentScopeId: "",
      expandDescendants,
      deniedResourceIds: resolved.deniedResourceIds,
      createdAt: new Date(),
    };
    await this.saveUnderCaps(scope);
    return scope;
  }

  /** A scope `principal` made (NOT_FOUND for another's, an unknown or a malformed id alike). */
  async get(principal: Principal, scopeId: string): Promise<ResourceScope> {
    if (scopeId.length === 0) throw InvalidArgumentError.field("scope_id", "empty: give the scope_id ResolveScope returned");
    // A malformed id is answered like an unknown one, as the acms-scope header is.
    const scope = isUlid(scopeId) ? await this.scopes.get(scopeId) : undefined;
    if (!scope || scope.owner !== principal.name) throw new NotFoundError(`scope ${scopeId.slice(0, 64)} not found`);
    return scope;
  }

  /** Stores a child of `parent` that sees at most what the parent sees. */
  async narrow(principal: Principal, parent: ResourceScope, req: NarrowScopeInput): Promise<ResourceScope> {
    const violations: FieldViolation[] = [];
    tooMany("deny_resource_ids", req.denyResourceIds, SCOPE_LIMITS.maxDenyIds, violations);
    tooMany("projects", req.projects, SCOPE_LIMITS.maxProjects, violations);
    tooMany("exclude_paths", req.excludePaths, SCOPE_LIMITS.maxGlobs, violations);
    req.denyResourceIds.forEach((id, i) => {
      const problem = resourceIdProblem(id);
      if (problem) violations.push({ field: `deny_resource_ids[${i}]`, description: problem });
    });
    if (req.excludePaths.length <= SCOPE_LIMITS.maxGlobs) {
      // The child holds the parent's globs too: the budget is the chain's, the new globs are what it blames.
      violations.push(
        ...scopeGlobViolations([
          { field: "include_paths", patterns: parent.includePaths, inherited: true },
          { field: "exclude_paths", patterns: parent.excludePaths, inherited: true },
          { field: "exclude_paths", patterns: req.excludePaths },
        ]),
      );
    }
    if (violations.length > 0) throw new InvalidArgumentError(violations);
    await this.assertUnderCaps(principal);
    const registry = this.registry;
    const childProjects = req.projects.length > 0 ? [...new Set(req.projects)] : [...parent.projectNames];
    const narrowed = await narrowScopeResources({
      parentResourceIds: parent.resourceIds,
      parentProjects: parent.projectNames,
      childProjects,
      childLinks: await registry.linksOfProjects(childProjects),
      withDescendants: (ids) => registry.withDescendants(ids),
      denyResourceIds: req.denyResourceIds,
      expandDescendants: parent.expandDescendants,
    });
    const excludePaths = [...parent.excludePaths];
    for (const p of req.excludePaths) if (!excludePaths.includes(p)) excludePaths.push(p);
    const scope: ResourceScope = {
      scopeId: newUlid(),
      owner: principal.name,
      resourceIds: narrowed.resourceIds,
      projectNames: childProjects,
      temporalScope: parent.temporalScope,
      includeResources: [...parent.includeResources],
      excludeResources: [...parent.excludeResources],
      includePaths: [...parent.includePaths],
      excludePaths,
      parentScopeId: parent.scopeId,
      expandDescendants: parent.expandDescendants,
      deniedResourceIds: [...new Set([...parent.deniedResourceIds, ...narrowed.deniedResourceIds])].sort(),
      createdAt: new Date(),
    };
    await this.saveUnderCaps(scope);
    return scope;
  }

  /**
   * One page of the scopes `principal` resolved or narrowed, newest first (by scope id descending: ULIDs, so
   * by creation time, ties by id), never another principal's. The token holds the id of the last scope of
   * the previous page; the next page is read from the store by owner and before that id, so a token carrying
   * any other id (another principal's too) only says where to start among the caller's own scopes.
   */
  async list(
    principal: Principal,
    req: { pageSize?: number; pageToken: string },
  ): Promise<{ scopes: ResourceScope[]; nextPageToken: string }> {
    const size = pageSizeOf(req.pageSize);
    let before = decodePageToken(req.pageToken, "scopes", "", isUlid);
    const scopes: ResourceScope[] = [];
    // One row past the page says whether another follows; the store answers at most MAX_SCOPE_PAGE per read.
    while (scopes.length <= size) {
      const page = await this.scopes.listByOwner(principal.name, { limit: Math.min(MAX_SCOPE_PAGE, size + 1 - scopes.length), before });
      scopes.push(...page.scopes);
      if (page.next === undefined) break;
      before = page.next;
    }
    if (scopes.length <= size) return { scopes, nextPageToken: "" };
    scopes.length = size;
    return { scopes, nextPageToken: encodePageToken("scopes", scopes[size - 1].scopeId) };
  }
}
