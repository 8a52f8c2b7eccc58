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
