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
  /**
   * True while the resource is being erased (DeleteResource has recorded its intent): it then has no links
   * and no parents, every read treats it as gone, and only its owner's retried DeleteResource may name it.
   */
  erasing?: boolean;
}

/** A durable erasure intent: the resource being erased and what the intent's transaction removed. */
export interface ErasureIntent {
  resourceId: string;
  ownerProject: string;
  /** The links (aliases) removed when the intent was recorded. */
  links: number;
}

/**
 * One page of a keyset listing: the rows whose key is above `after` (exclusive; absent: from the start), in
 * ascending key order (byte order of the UTF-8 key), at most `limit` of them. Stable while rows are added
 * or removed between pages: a position, not an offset.
 */
export interface KeysetPage {
  after?: string;
  limit: number;
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
 *
 * Asynchronous, so a networked engine can implement it. Guarantees every implementation gives:
 * - Each write method (`createProject`, `registerResource`, `linkResource`) is one transaction that
 *   commits whole or not at all: a failed registration leaves no resource, link or parent edge behind.
 * - Each read method answers from one committed state: it sees a concurrent write entirely or not at all.
 * - Two calls are two transactions. A caller that reads several times (scope resolution: links, then
 *   descendants, then visibility) may see writes committed in between; such callers are written so that
 *   a registration racing them is either included or not, never half. Links into projects other than the
 *   owner's may be removed (`unlinkResource`); whatever was computed from links before (a stored scope's
 *   resource set) is re-checked against the current links where it is used.
 *   Erasure (`beginErasure`) removes a resource's links and edges in one transaction, so a racing reader sees
 *   it whole or gone.
 * - A write is visible to every read that starts after its promise resolved.
 */
/** A resource's owner and whether it is being erased (RegistryStore.resourceState). */
export interface ResourceState {
  ownerProject: string;
  erasing: boolean;
}

export interface RegistryStore {
  createProject(name: string): Promise<ProjectRecord>;
  getProject(name: string): Promise<ProjectRecord | undefined>;
  /** Every project by name, or one page of them by name when `page` is given (the key is the name). */
  listProjects(page?: KeysetPage): Promise<ProjectRecord[]>;
  registerResource(input: NewResource): Promise<ResourceRecord>;
  linkResource(link: LinkRecord): Promise<LinkRecord>;
  getResource(id: string): Promise<ResourceRecord | undefined>;
  /**
   * Resource `id`'s owner project and whether it is being erased (`beginErasure`), from one read of its row;
   * undefined when there is no such resource. What the checks of every write need (the write rule and "not
   * being erased"), where getResource reads its links and edges too.
   */
  resourceState(id: string): Promise<ResourceState | undefined>;
  /** The resources linked into `project`, each with its alias there, by alias; one page of them (the key is the alias) when `page` is given. */
  listResources(project: string, page?: KeysetPage): Promise<Array<ResourceRecord & { alias: string }>>;
  /** The id behind an alias of `project`, or an id linked into it; undefined when neither. */
  resolveAlias(project: string, aliasOrId: string): Promise<string | undefined>;
  /** One message per alias that is not unique within `project`. */
  duplicateAliases(project: string): Promise<string[]>;
  /** Every link into any of `projects`. */
  linksOfProjects(projects: readonly string[]): Promise<LinkRecord[]>;
  /** `ids` and all their DAG descendants. */
  withDescendants(ids: readonly string[]): Promise<Set<string>>;
  /** Releases the store; no call may follow. */
  close(): Promise<void>;
  /**
   * Removes the link of `resourceId` from `project` (its alias there with it) in one transaction, and answers
   * the removed link. NotFound when the project does not exist or holds no such link; FailedPrecondition
   * when `project` owns the resource (the owner's link goes only with the resource).
   */
  unlinkResource(project: string, resourceId: string): Promise<LinkRecord>;
  /**
   * A number that changes whenever this store removes a link (read synchronously, on the hot path): what was
   * computed from links while it held another value (a cached scope view) must be computed again.
   */
  linkRemovals(): number;
  /**
   * Records the durable intent to erase resource `id`, in one transaction: its links (aliases) in every
   * project and every parent edge naming it (as child or parent: its children lose it as a parent) go,
   * and the resource is marked erasing (`getResource` answers it with `erasing`; no listing, alias,
   * link, scope resolution or descendant walk finds it). Idempotent: an intent already recorded is
   * answered as recorded. Undefined when no such resource exists.
   */
  beginErasure(id: string): Promise<ErasureIntent | undefined>;
  /** Every recorded intent not yet finished (to resume after a restart). */
  pendingErasures(): Promise<ErasureIntent[]>;
  /** Removes the erasing resource's row: the erasure is complete (no-op when already gone). */
  finishErasure(id: string): Promise<void>;
  /**
   * Deletes project `name` and every link into it, in one transaction, answering the links removed.
   * FailedPrecondition while it owns resources (erasing ones included); NotFound when there is none.
   */
  deleteProject(name: string): Promise<{ links: number }>;
}
