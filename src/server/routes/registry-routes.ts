import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ProjectSchema,
  RegistryService,
  ResourceLinkSchema,
  ResourceSchema,
  type Project,
  type Resource,
  type ResourceLink,
} from "../../../gen/acms/v1/registry_pb.js";
import { AlreadyExistsError, InvalidArgumentError, NotFoundError, type FieldViolation } from "../../domain/errors.js";
import { assertProjectName, projectNameProblem } from "../../domain/project-name.js";
import type { LinkRecord, ProjectRecord, RegistryStore, ResourceRecord } from "../../ports/registry-store.js";
import { resourceVisibility, type ResourceVisibility } from "../../application/registry/resource-visibility.js";
import { principalOf } from "../access/handler-context.js";
import type { Principal } from "../../domain/principal.js";
import type { RouteDeps } from "../composition/server-deps.js";

/** The longest `alias_or_id` looked up. */
const MAX_ALIAS_OR_ID = 128;

function toProject(p: ProjectRecord): Project {
  return create(ProjectSchema, { name: p.name, namespace: p.name.split("/")[0], createdAt: timestampFromDate(p.createdAt) });
}

function toLink(l: LinkRecord): ResourceLink {
  return create(ResourceLinkSchema, { project: l.project, resourceId: l.resourceId, alias: l.alias });
}

/**
 * The wire form of a resource as `principal` may see it: links into projects the key does not allow,
 * parents the key cannot see, and an owner project the key does not allow (left empty) are left out, so a
 * listing never reveals another tenant's projects or ids.
 */
async function toResource(r: ResourceRecord, alias: string, principal: Principal, visible: ResourceVisibility): Promise<Resource> {
  return create(ResourceSchema, {
    id: r.id,
    ownerProject: principal.allowsProject(r.ownerProject) ? r.ownerProject : "",
    kind: r.kind,
    parentIds: await visible.filter(r.parentIds),
    metadata: r.metadata,
    alias,
    links: r.links.filter((l) => principal.allowsProject(l.project)).map(toLink),
    createdAt: timestampFromDate(r.createdAt),
  });
}

/**
 * The answer to an explicit RegisterResource `id` taken by a resource the key cannot see. ALREADY_EXISTS
 * would confirm another tenant's resource id; this is INVALID_ARGUMENT on `id`, the code and field of any id
 * that cannot be used (a malformed one too), with a message that says nothing of why. Ids the caller can see
 * stay ALREADY_EXISTS: nothing to hide, and the clearer answer.
 */
function unusableId(id: string): InvalidArgumentError {
  return InvalidArgumentError.field("id", `"${id.slice(0, 80)}" cannot be used as a resource id: choose another ULID or leave it empty to have one assigned`);
}

/** An empty project slips past the interceptor (it skips empty refs), so handlers check the shape too. */
async function requireProject(registry: RegistryStore, name: string): Promise<void> {
  assertProjectName("project", name);
  if (!(await registry.getProject(name))) throw new NotFoundError(`project ${name} not found`);
}

/**
 * RegistryService on the configured registry store. The access interceptor has already authenticated the
 * key, refused writes by read-only keys and checked every project and parent/resource id against the
 * key's projects; handlers add existence, uniqueness and shape rules.
 */
export function registryRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const registry = deps.backends.registry;
  return (router) => {
    router.service(RegistryService, {
      async createProject(req) {
        return { project: toProject(await registry.createProject(req.name)) };
      },
      async listProjects(_req, ctx) {
        const principal = principalOf(ctx);
        return { projects: (await registry.listProjects()).filter((p) => principal.allowsProject(p.name)).map(toProject) };
      },
      async registerResource(req, ctx) {
        const principal = principalOf(ctx);
        const visible = resourceVisibility(registry, principal);
        if (req.id.length > 0 && (await registry.getResource(req.id)) && !(await visible(req.id))) throw unusableId(req.id);
        let record: ResourceRecord;
        try {
          record = await registry.registerResource({
            id: req.id,
            project: req.project,
            alias: req.alias,
            kind: req.kind,
            parentIds: req.parentIds,
            metadata: req.metadata,
          });
        } catch (err) {
          // Taken between the check and the write: answered as above when the caller cannot see the taker.
          if (err instanceof AlreadyExistsError && req.id.length > 0 && (await registry.getResource(req.id)) && !(await visible(req.id))) {
            throw unusableId(req.id);
          }
          throw err;
        }
        return { resource: await toResource(record, req.alias, principal, visible) };
      },
      async linkResource(req) {
        assertProjectName("project", req.project);
        return { link: toLink(await registry.linkResource({ project: req.project, resourceId: req.resourceId, alias: req.alias })) };
      },
      async listResources(req, ctx) {
        assertProjectName("project", req.project);
        const principal = principalOf(ctx);
        const visible = resourceVisibility(registry, principal);
        const records = await registry.listResources(req.project);
        return { resources: await Promise.all(records.map((r) => toResource(r, r.alias, principal, visible))) };
      },
      async resolveAlias(req) {
        const violations: FieldViolation[] = [];
        const projectProblem = projectNameProblem(req.project);
        if (projectProblem) violations.push({ field: "project", description: projectProblem });
        if (req.aliasOrId.length === 0) violations.push({ field: "alias_or_id", description: "empty: give an alias or a resource id" });
        else if (req.aliasOrId.length > MAX_ALIAS_OR_ID) violations.push({ field: "alias_or_id", description: `longer than ${MAX_ALIAS_OR_ID} characters` });
        if (violations.length > 0) throw new InvalidArgumentError(violations);
        await requireProject(registry, req.project);
        const id = await registry.resolveAlias(req.project, req.aliasOrId);
        if (!id) throw new NotFoundError(`no resource with alias or id "${req.aliasOrId}" in ${req.project}`);
        return { resourceId: id };
      },
      async validateAliases(req) {
        assertProjectName("project", req.project);
        return { errors: await registry.duplicateAliases(req.project) };
      },
    });
  };
}
