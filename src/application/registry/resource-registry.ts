import { AlreadyExistsError, InvalidArgumentError, NotFoundError, type FieldViolation } from "../../domain/errors.js";
import type { Principal } from "../../domain/principal.js";
import { assertResourceRequest } from "../../domain/new-resource-check.js";
import { hasNul, NUL_PROBLEM } from "../../domain/nul-character.js";
import { assertProjectName, projectNameProblem } from "../../domain/project-name.js";
import type { LinkRecord, NewResource, ProjectRecord, RegistryStore, ResourceRecord } from "../../ports/registry-store.js";
import { decodePageToken, encodePageToken, pageSizeOf } from "../../domain/page-token.js";
import { aliasProblem } from "../../domain/resource-alias.js";
import { resourceIdProblem } from "../../domain/ulid-id.js";
import { resourceVisibility, type ResourceVisibility } from "./resource-visibility.js";

/** The longest `alias_or_id` looked up. */
const MAX_ALIAS_OR_ID = 128;

/**
 * A resource as one principal may see it: links into projects the key does not allow, parents the key
 * cannot see, and an owner project the key does not allow (left empty) are left out, so a listing never
 * reveals another tenant's projects or ids.
 */
export interface VisibleResource {
  id: string;
  /** Empty when the key does not allow the owner project. */
  ownerProject: string;
  kind: string;
  parentIds: string[];
  metadata: Record<string, string>;
  /** The alias in the project it was asked through. */
  alias: string;
  links: LinkRecord[];
  createdAt: Date;
}

async function visibleResource(
  r: ResourceRecord,
  alias: string,
  principal: Principal,
  visible: ResourceVisibility,
): Promise<VisibleResource> {
  return {
    id: r.id,
    ownerProject: principal.allowsProject(r.ownerProject) ? r.ownerProject : "",
    kind: r.kind,
    parentIds: await visible.filter(r.parentIds),
    metadata: r.metadata,
    alias,
    links: r.links.filter((l) => principal.allowsProject(l.project)),
    createdAt: r.createdAt,
  };
}

/** What a paged listing asks for: the wire's `page_size` (absent: the default) and `page_token` (empty: the first page). */
export interface PageRequest {
  pageSize?: number;
  pageToken: string;
}

/** One page of a listing and the token of the next (empty on the last page). */
export interface Page<T> {
  items: T[];
  nextPageToken: string;
}

/**
 * The answer to an explicit RegisterResource `id` taken by a resource the key cannot see. ALREADY_EXISTS
 * would confirm another tenant's resource id; this is INVALID_ARGUMENT on `id`, the code and field of any id
 * that cannot be used (a malformed one too), with a message that says nothing of why. Ids the caller can see
 * stay ALREADY_EXISTS: nothing to hide, and the clearer answer.
 */
function unusableId(id: string): InvalidArgumentError {
  return InvalidArgumentError.field(
    "id",
    `"${id.slice(0, 80)}" cannot be used as a resource id: choose another ULID or leave it empty to have one assigned`,
  );
}

/**
 * The registry use cases: projects, resources, links and aliases, as one principal may see them. The
 * front ends have authenticated the key, refused writes by read-only keys and checked every project and
 * parent/resource id against the key's projects; these add existence, uniqueness and shape rules.
 * @example const resource = await registry.registerResource(principal, { id: "", project: "local/api", alias: "docs", kind: "docs", parentIds: [], metadata: {} });
 */
export class ResourceRegistry {
  constructor(private readonly registry: RegistryStore) {}

  createProject(name: string): Promise<ProjectRecord> {
    return this.registry.createProject(name);
  }

  /** The projects the key allows. */
  async listProjects(principal: Principal): Promise<ProjectRecord[]> {
    return (await this.registry.listProjects()).filter((p) => principal.allowsProject(p.name));
  }

  async registerResource(principal: Principal, req: NewResource): Promise<VisibleResource> {
    const registry = this.registry;
    // Every field is checked before the id is looked up: a malformed id (a NUL in it too) never reaches a store.
    assertResourceRequest(req);
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
    return visibleResource(record, req.alias, principal, visible);
  }

  async linkResource(link: LinkRecord): Promise<LinkRecord> {
    assertProjectName("project", link.project);
    return this.registry.linkResource({ project: link.project, resourceId: link.resourceId, alias: link.alias });
  }

  async listResources(principal: Principal, project: string): Promise<VisibleResource[]> {
    assertProjectName("project", project);
    const visible = resourceVisibility(this.registry, principal);
    const records = await this.registry.listResources(project);
    return Promise.all(records.map((r) => visibleResource(r, r.alias, principal, visible)));
  }

  /** The resource id behind an alias (or id) of `project` (NOT_FOUND when neither). */
  async resolveAlias(project: string, aliasOrId: string): Promise<string> {
    const violations: FieldViolation[] = [];
    const projectProblem = projectNameProblem(project);
    if (projectProblem) violations.push({ field: "project", description: projectProblem });
    if (aliasOrId.length === 0) violations.push({ field: "alias_or_id", description: "empty: give an alias or a resource id" });
    else if (aliasOrId.length > MAX_ALIAS_OR_ID)
      violations.push({ field: "alias_or_id", description: `longer than ${MAX_ALIAS_OR_ID} characters` });
    else if (hasNul(aliasOrId)) violations.push({ field: "alias_or_id", description: NUL_PROBLEM });
    if (violations.length > 0) throw new InvalidArgumentError(violations);
    await this.requireProject(project);
    const id = await this.registry.resolveAlias(project, aliasOrId);
    if (!id) throw new NotFoundError(`no resource with alias or id "${aliasOrId}" in ${project}`);
    return id;
  }

  /** One message per alias of `project` that is not unique. */
  async validateAliases(project: string): Promise<string[]> {
    assertProjectName("project", project);
    return this.registry.duplicateAliases(project);
  }

  /**
   * One page of the projects the key allows, by name. The store pages by name after the token's position;
   * the key's globs are applied to every row read, so a page holds only allowed projects and a token (a
   * position, whatever it says) can show nothing the key could not list from the start. Rows the key does
   * not allow are skipped by reading on until the page is full or the projects end.
   */
  async listProjectsPage(principal: Principal, req: PageRequest): Promise<Page<ProjectRecord>> {
    const size = pageSizeOf(req.pageSize);
    let after = decodePageToken(req.pageToken, "projects", "", (k) => projectNameProblem(k) === undefined);
    const items: ProjectRecord[] = [];
    for (;;) {
      const batch = await this.registry.listProjects({ after, limit: size + 1 });
      for (const p of batch) if (principal.allowsProject(p.name) && items.length <= size) items.push(p);
      if (items.length > size || batch.length <= size) break;
      after = batch[batch.length - 1].name;
    }
    return lastPage(items, size, (p) => encodePageToken("projects", p.name));
  }

  /** One page of `project`'s resources by alias (the key allows the project: the access check saw to it). */
  async listResourcesPage(principal: Principal, project: string, req: PageRequest): Promise<Page<VisibleResource>> {
    assertProjectName("project", project);
    const size = pageSizeOf(req.pageSize);
    const after = decodePageToken(req.pageToken, "resources", project, (k) => aliasProblem(k) === undefined);
    const visible = resourceVisibility(this.registry, principal);
    const records = await this.registry.listResources(project, { after, limit: size + 1 });
    const page = lastPage(records, size, (r) => encodePageToken("resources", r.alias, project));
    return {
      items: await Promise.all(page.items.map((r) => visibleResource(r, r.alias, principal, visible))),
      nextPageToken: page.nextPageToken,
    };
  }

  /**
   * Removes `resourceId`'s link from `project` (not its owner: FAILED_PRECONDITION, delete the resource
   * instead; no such link: NOT_FOUND) and answers the removed link. The front ends have checked that the
   * key may write `project`; the resource need only be one the key can see, since the link being removed
   * is the project's, not the resource's. Scopes that reached the resource only through this link stop
   * seeing it at their next call (their views are rebuilt from the current links).
   */
  async unlinkResource(project: string, resourceId: string): Promise<LinkRecord> {
    const violations: FieldViolation[] = [];
    const projectProblem = projectNameProblem(project);
    if (projectProblem) violations.push({ field: "project", description: projectProblem });
    const idProblem = resourceIdProblem(resourceId);
    if (idProblem) violations.push({ field: "resource_id", description: idProblem });
    if (violations.length > 0) throw new InvalidArgumentError(violations);
    return this.registry.unlinkResource(project, resourceId);
  }

  /** An empty project slips past the access checks (they skip empty refs), so the shape is checked here too. */
  private async requireProject(name: string): Promise<void> {
    assertProjectName("project", name);
    if (!(await this.registry.getProject(name))) throw new NotFoundError(`project ${name} not found`);
  }
}

/** The first `size` of `rows` (read one past the page), and the token after the last of them when more followed. */
function lastPage<T>(rows: T[], size: number, tokenAfter: (row: T) => string): Page<T> {
  if (rows.length <= size) return { items: rows, nextPageToken: "" };
  const items = rows.slice(0, size);
  return { items, nextPageToken: tokenAfter(items[size - 1]) };
}
