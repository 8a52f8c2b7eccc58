import micromatch from "micromatch";

/**
 * Who calls: found from the API key. `projects` are globs over project names; `write` allows the
 * RegistryService and IndexService on those projects.
 */
export interface Principal {
  readonly name: string;
  readonly projects: readonly string[];
  readonly write: boolean;
  /** Whether the key allows `project` at all. */
  allowsProject(project: string): boolean;
}

/** Builds a principal whose project check is compiled once. */
export function createPrincipal(name: string, projects: readonly string[], write: boolean): Principal {
  const matchers = projects.map((glob) => micromatch.matcher(glob, { dot: true }));
  return {
    name,
    projects,
    write,
    allowsProject: (project) => matchers.some((m) => m(project)),
  };
}

/** A resource as the access rules see it: its owner project and every project it is linked into. */
export interface ResourceReach {
  readonly ownerProject: string;
  readonly links: readonly { readonly project: string }[];
}

/**
 * The one read rule: a principal may read a resource linked into any project its key allows (a resource
 * that does not exist is invisible the same way, so ids of other tenants reveal nothing).
 */
export function mayRead(principal: Principal, resource: ResourceReach | undefined): boolean {
  return resource !== undefined && resource.links.some((l) => principal.allowsProject(l.project));
}

/** The one write rule: writes need the resource's owner project, so a link never grants write access. */
export function mayWrite(principal: Principal, resource: Pick<ResourceReach, "ownerProject"> | undefined): boolean {
  return resource !== undefined && principal.allowsProject(resource.ownerProject);
}
