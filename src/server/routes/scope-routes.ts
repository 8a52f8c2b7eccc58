import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { ResourceScopeSchema, ScopeService, type ResourceScope as ResourceScopeMessage } from "../../../gen/acms/v1/scope_pb.js";
import { InvalidArgumentError, NotFoundError, type FieldViolation } from "../../domain/errors.js";
import { globViolations } from "../../domain/path-filter.js";
import { projectNameProblem } from "../../domain/project-name.js";
import { TEMPORAL_SCOPES, type ResourceScope, type TemporalScope } from "../../domain/scope.js";
import { narrowScopeResources, resolveScopeResources } from "../../domain/scope-resolution.js";
import { isUlid, newUlid, resourceIdProblem } from "../../domain/ulid-id.js";
import { resourceVisibility } from "../../application/registry/resource-visibility.js";
import { principalOf, viewOf } from "../access/handler-context.js";
import type { RouteDeps } from "../composition/server-deps.js";

/** Caps on list sizes, so one request cannot make a scope arbitrarily expensive to resolve or store. */
export const SCOPE_LIMITS = { maxProjects: 256, maxResourceNames: 1024, maxGlobs: 256, maxDenyIds: 4096 } as const;

/** The wire form of a stored scope. */
export function toScopeMessage(s: ResourceScope): ResourceScopeMessage {
  return create(ResourceScopeSchema, {
    scopeId: s.scopeId,
    resourceIds: [...s.resourceIds],
    projectNames: [...s.projectNames],
    temporalScope: s.temporalScope,
    includeResources: [...s.includeResources],
    excludeResources: [...s.excludeResources],
    includePaths: [...s.includePaths],
    excludePaths: [...s.excludePaths],
    parentScopeId: s.parentScopeId,
    expandDescendants: s.expandDescendants,
    deniedResourceIds: [...s.deniedResourceIds],
    createdAt: timestampFromDate(s.createdAt),
  });
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
 * ScopeService. Scopes are resolved here once, stored immutably and named by a ULID; the access interceptor
 * turns the `acms-scope` header into a view for NarrowScope and the validation RPCs, and checks their
 * project and resource fields against it (so the validation RPCs only have to answer empty).
 */
export function scopeRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const registry = deps.backends.registry;
  const scopes = deps.backends.scopes;
  return (router) => {
    router.service(ScopeService, {
      async resolveScope(req, ctx) {
        const principal = principalOf(ctx);
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
        violations.push(...globViolations("include_paths", req.includePaths), ...globViolations("exclude_paths", req.excludePaths));
        const temporalScope = parseTemporal(req.temporalScope, violations);
        if (violations.length > 0) throw new InvalidArgumentError(violations);
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
        await scopes.save(scope);
        return { scope: toScopeMessage(scope) };
      },
      async getScope(req, ctx) {
        const principal = principalOf(ctx);
        if (req.scopeId.length === 0) throw InvalidArgumentError.field("scope_id", "empty: give the scope_id ResolveScope returned");
        // A malformed id is answered like an unknown one, as the acms-scope header is.
        const scope = isUlid(req.scopeId) ? await scopes.get(req.scopeId) : undefined;
        if (!scope || scope.owner !== principal.name) throw new NotFoundError(`scope ${req.scopeId.slice(0, 64)} not found`);
        return { scope: toScopeMessage(scope) };
      },
      async narrowScope(req, ctx) {
        const principal = principalOf(ctx);
        const parent = viewOf(ctx).scope;
        const violations: FieldViolation[] = [];
        tooMany("deny_resource_ids", req.denyResourceIds, SCOPE_LIMITS.maxDenyIds, violations);
        tooMany("projects", req.projects, SCOPE_LIMITS.maxProjects, violations);
        tooMany("exclude_paths", req.excludePaths, SCOPE_LIMITS.maxGlobs, violations);
        req.denyResourceIds.forEach((id, i) => {
          const problem = resourceIdProblem(id);
          if (problem) violations.push({ field: `deny_resource_ids[${i}]`, description: problem });
        });
        violations.push(...globViolations("exclude_paths", req.excludePaths));
        if (violations.length > 0) throw new InvalidArgumentError(violations);
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
        await scopes.save(scope);
        return { scope: toScopeMessage(scope) };
      },
      validateProjectScope() {
        return {};
      },
      validateResourceScope() {
        return {};
      },
    });
  };
}
