import { InvalidArgumentError, type FieldViolation } from "./errors.js";
import { isProjectName } from "./project-name.js";
import { isUlid } from "./ulid-id.js";

/** A resource's presence in one project, as resolution needs it. */
export interface ScopeLink {
  project: string;
  resourceId: string;
  alias: string;
}

/**
 * Everything resolution needs, handed in so the rules stay free of any database. The look-ups are
 * asynchronous (the registry may be a networked engine) and each is its own read: a registration
 * committed between two of them is either seen by the later one or not, and never widens a scope past
 * `visible`.
 */
export interface ScopeResolutionInput {
  /** The scope's projects: valid, existing, allowed by the caller's key, deduplicated. */
  projects: readonly string[];
  /** Every link into any of `projects`. */
  links: readonly ScopeLink[];
  /** `ids` together with all their DAG descendants. */
  withDescendants: (ids: readonly string[]) => Promise<ReadonlySet<string>>;
  /**
   * Whether the caller may see a resource reached only as a descendant (it is linked into a project the
   * caller's key allows): expansion never widens a scope past the key.
   */
  visible: (resourceId: string) => Promise<boolean>;
  includeResources: readonly string[];
  excludeResources: readonly string[];
  /**
   * Whether the scope reaches the DAG descendants of the linked resources, and allow and deny cover the
   * descendants of the resources they name. False keeps exactly the linked resources.
   */
  expandDescendants: boolean;
}

/** The effective resources of a scope and what its deny list removed, both sorted. */
export interface ScopeResolution {
  resourceIds: string[];
  deniedResourceIds: string[];
}

/** The longest resource name (ULID, alias or `namespace/project:alias`) accepted. */
export const MAX_RESOURCE_NAME_LENGTH = 400;

/**
 * The resource ids a name in `include_resources`/`exclude_resources` stands for: a ULID names itself
 * (when the scope holds it), a bare alias every resource with that alias in any scoped project, and
 * `namespace/project:alias` the one resource with that alias in that project, which must be one of the
 * scope's projects. Returns a field violation instead when the name is malformed or matches nothing, so a
 * typo never silently widens or empties a scope.
 */
export function resolveResourceName(
  field: string,
  name: string,
  projects: ReadonlySet<string>,
  candidates: ReadonlySet<string>,
  idsByAlias: ReadonlyMap<string, readonly ScopeLink[]>,
): string[] | FieldViolation {
  const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name;
  if (name.length === 0) return { field, description: "the resource name is empty" };
  if (name.length > MAX_RESOURCE_NAME_LENGTH)
    return { field, description: `the resource name is longer than ${MAX_RESOURCE_NAME_LENGTH} characters` };
  if (isUlid(name)) {
    return candidates.has(name) ? [name] : { field, description: `resource ${name} is not in the scope's projects` };
  }
  const colon = name.indexOf(":");
  if (colon >= 0) {
    const project = name.slice(0, colon);
    const alias = name.slice(colon + 1);
    if (!isProjectName(project) || alias.length === 0) {
      return { field, description: `"${shown}" is not a resource name: expected a ULID, an alias or namespace/project:alias` };
    }
    if (!projects.has(project))
      return { field, description: `"${shown}" names project ${project}, which is not one of the scope's projects` };
    const hit = (idsByAlias.get(alias) ?? []).find((l) => l.project === project);
    return hit ? [hit.resourceId] : { field, description: `no resource has alias "${alias}" in ${project}` };
  }
  const hits = idsByAlias.get(name);
  if (!hits || hits.length === 0) return { field, description: `no resource has alias "${shown}" in the scope's projects` };
  return [...new Set(hits.map((l) => l.resourceId))];
}

/**
 * Resolves a scope's effective resources: collect every resource linked into the projects, expand each to
 * its (visible) DAG descendants when `expandDescendants` (without it exactly the linked resources stay),
 * keep only the allow list when it is non-empty, then drop the deny list (deny after allow). Allow and
 * deny act on the named resources with their descendants when `expandDescendants`. Every bad name of
 * both lists is reported at once, as INVALID_ARGUMENT.
 * @example await resolveScopeResources({ projects: ["local/api"], links, withDescendants, visible, includeResources: [], excludeResources: ["old-docs"], expandDescendants: true })
 */
export async function resolveScopeResources(input: ScopeResolutionInput): Promise<ScopeResolution> {
  const projects = new Set(input.projects);
  const linked = [...new Set(input.links.filter((l) => projects.has(l.project)).map((l) => l.resourceId))];
  const base = new Set(linked);
  if (input.expandDescendants) {
    const reached = [...(await input.withDescendants(linked))].filter((id) => !base.has(id));
    const shown = await Promise.all(reached.map((id) => input.visible(id)));
    reached.forEach((id, i) => {
      if (shown[i]) base.add(id);
    });
  }
  const idsByAlias = new Map<string, ScopeLink[]>();
  for (const l of input.links) {
    if (!projects.has(l.project)) continue;
    let list = idsByAlias.get(l.alias);
    if (!list) idsByAlias.set(l.alias, (list = []));
    list.push(l);
  }
  const violations: FieldViolation[] = [];
  const named = async (field: string, names: readonly string[]): Promise<Set<string>> => {
    const ids = new Set<string>();
    names.forEach((name, i) => {
      const r = resolveResourceName(`${field}[${i}]`, name, projects, base, idsByAlias);
      if (Array.isArray(r)) r.forEach((id) => ids.add(id));
      else violations.push(r);
    });
    if (!input.expandDescendants || ids.size === 0) return ids;
    const expanded = new Set<string>();
    for (const id of await input.withDescendants([...ids])) if (base.has(id)) expanded.add(id);
    return expanded;
  };
  const allow = await named("include_resources", input.includeResources);
  const deny = await named("exclude_resources", input.excludeResources);
  if (violations.length > 0) throw new InvalidArgumentError(violations);
  const kept = input.includeResources.length > 0 ? [...base].filter((id) => allow.has(id)) : [...base];
  const resourceIds = kept.filter((id) => !deny.has(id)).sort();
  const deniedResourceIds = kept.filter((id) => deny.has(id)).sort();
  return { resourceIds, deniedResourceIds };
}

/** What narrowing needs from the parent scope and the registry. */
export interface NarrowingInput {
  /** The parent's effective resources. */
  parentResourceIds: readonly string[];
  parentProjects: readonly string[];
  /** The child's projects (a subset of the parent's, already checked). */
  childProjects: readonly string[];
  /** Every link into any of `childProjects`. */
  childLinks: readonly ScopeLink[];
  withDescendants: (ids: readonly string[]) => Promise<ReadonlySet<string>>;
  /** Ids to deny, already checked to be ULIDs. */
  denyResourceIds: readonly string[];
  /** The parent's setting: whether the child's projects reach descendants and a deny covers them. */
  expandDescendants: boolean;
}

/**
 * A child scope's resources: the parent's effective resources that are linked into the child's projects or
 * (when the parent expands descendants) descend from such within the parent, minus the denied ids (with
 * descendants when the parent expands them). Ids the parent does not hold change nothing. `deniedResourceIds` lists what the narrowing removed
 * (by project or by deny), so a child emptied by narrowing is refused when used rather than answering empty.
 */
export async function narrowScopeResources(input: NarrowingInput): Promise<ScopeResolution> {
  const parent = new Set(input.parentResourceIds);
  let kept: Set<string>;
  const sameProjects =
    input.childProjects.length === input.parentProjects.length && input.childProjects.every((p) => input.parentProjects.includes(p));
  if (sameProjects) kept = parent;
  else {
    const childProjects = new Set(input.childProjects);
    const linked = [
      ...new Set(input.childLinks.filter((l) => childProjects.has(l.project) && parent.has(l.resourceId)).map((l) => l.resourceId)),
    ];
    kept = input.expandDescendants ? new Set([...(await input.withDescendants(linked))].filter((id) => parent.has(id))) : new Set(linked);
  }
  const deniedSeeds = input.denyResourceIds.filter((id) => parent.has(id));
  const deny = input.expandDescendants && deniedSeeds.length > 0 ? await input.withDescendants(deniedSeeds) : new Set(deniedSeeds);
  const resourceIds = [...kept].filter((id) => !deny.has(id)).sort();
  const remaining = new Set(resourceIds);
  const deniedResourceIds = input.parentResourceIds.filter((id) => !remaining.has(id)).sort();
  return { resourceIds, deniedResourceIds };
}
