/** A project as the registry stores it. */
export interface ProjectRecord {
  name: string;
  createdAt: Date;
}

/** A resource's presence in one project. */
export interface LinkRecord {
  project: string;
  resourceId: string;
  alias: string;
}

/** A resource as the registry stores it. */
export interface ResourceRecord {
  id: string;
  ownerProject: string;
  kind: string;
  parentIds: string[];
  metadata: Record<string, string>;
  createdAt: Date;
  /** Every project the resource is linked into (the owner's link first). */
  links: LinkRecord[];
}

/** What RegisterResource stores. */
export interface NewResource {
  id: string;
  project: string;
  alias: string;
  kind: string;
  parentIds: string[];
  metadata: Record<string, string>;
}

/**
 * The registry port: projects, resources, links with per-project aliases, and the parent DAG.
 * Implementations enforce alias uniqueness per project and reject parent cycles; they throw domain
 * errors (AlreadyExists, NotFound, InvalidArgument) and never a driver's.
 */
export interface RegistryStore {
  createProject(name: string): ProjectRecord;
  getProject(name: string): ProjectRecord | undefined;
  listProjects(): ProjectRecord[];
  registerResource(input: NewResource): ResourceRecord;
  linkResource(link: LinkRecord): LinkRecord;
  getResource(id: string): ResourceRecord | undefined;
  /** The resources linked into `project`, each with its alias there. */
  listResources(project: string): Array<ResourceRecord & { alias: string }>;
  /** The id behind an alias of `project`, or an id linked into it; undefined when neither. */
  resolveAlias(project: string, aliasOrId: string): string | undefined;
  /** One message per alias that is not unique within `project`. */
  duplicateAliases(project: string): string[];
  /** Every link into any of `projects`. */
  linksOfProjects(projects: readonly string[]): LinkRecord[];
  /** `ids` and all their DAG descendants. */
  withDescendants(ids: readonly string[]): Set<string>;
  close(): void;
}
