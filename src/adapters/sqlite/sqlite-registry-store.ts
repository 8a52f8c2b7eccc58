import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from "../../domain/errors.js";
import { unlinkRefusal } from "../kit/registry-unlink.js";
import { assertProjectName } from "../../domain/project-name.js";
import { assertAlias } from "../../domain/resource-alias.js";
import { isUlid, resourceIdProblem } from "../../domain/ulid-id.js";
import type {
  ErasureIntent,
  KeysetPage,
  LinkRecord,
  NewResource,
  ProjectRecord,
  RegistryStore,
  ResourceRecord,
  ResourceState,
} from "../../ports/registry-store.js";
import {
  aliasCollisions,
  registeredResource,
  registryErrors,
  resourceToWrite,
  toLink,
  toResourceRecord,
  type LinkRow,
  type ResourceRow,
} from "../kit/registry-rows.js";
import { checkpointWal, isSqliteUniqueViolation, type SqliteDatabase } from "../kit/sqlite-database.js";
import { WalSync } from "../kit/wal-sync.js";
import { withoutFsync } from "../kit/without-fsync.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS registry_projects (
  name TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS registry_resources (
  id TEXT PRIMARY KEY,
  owner_project TEXT NOT NULL REFERENCES registry_projects(name),
  kind TEXT NOT NULL,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS registry_links (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  project TEXT NOT NULL REFERENCES registry_projects(name),
  resource_id TEXT NOT NULL REFERENCES registry_resources(id),
  alias TEXT NOT NULL,
  UNIQUE (project, resource_id),
  UNIQUE (project, alias)
);
CREATE INDEX IF NOT EXISTS registry_links_by_resource ON registry_links(resource_id, seq);
CREATE TABLE IF NOT EXISTS registry_parents (
  child_id TEXT NOT NULL REFERENCES registry_resources(id),
  parent_id TEXT NOT NULL REFERENCES registry_resources(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (child_id, parent_id)
);
CREATE INDEX IF NOT EXISTS registry_parents_by_parent ON registry_parents(parent_id);
`;

/** Adds the `erasing` mark (links removed by a recorded erasure intent; NULL while not erasing) to an older database. */
function migrateErasing(db: SqliteDatabase): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('registry_resources')").pluck().all() as string[];
  if (!columns.includes("erasing")) db.exec("ALTER TABLE registry_resources ADD COLUMN erasing INTEGER");
}

function erasureStatements(db: SqliteDatabase) {
  return {
    deleteLinksOf: db.prepare<[string]>("DELETE FROM registry_links WHERE resource_id = ?"),
    deleteEdgesOf: db.prepare<[string, string]>("DELETE FROM registry_parents WHERE child_id = ? OR parent_id = ?"),
    markErasing: db.prepare<[number, string]>("UPDATE registry_resources SET erasing = ? WHERE id = ?"),
    erasing: db.prepare<[], { id: string; owner_project: string; erasing: number }>(
      "SELECT id, owner_project, erasing FROM registry_resources WHERE erasing IS NOT NULL ORDER BY id",
    ),
    deleteErased: db.prepare<[string]>("DELETE FROM registry_resources WHERE id = ? AND erasing IS NOT NULL"),
    ownedCount: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM registry_resources WHERE owner_project = ?"),
    deleteLinksInto: db.prepare<[string]>("DELETE FROM registry_links WHERE project = ?"),
    deleteProject: db.prepare<[string]>("DELETE FROM registry_projects WHERE name = ?"),
  };
}

function addChild(children: Map<string, string[]>, parent: string, child: string): void {
  const list = children.get(parent);
  if (list) list.push(child);
  else children.set(parent, [child]);
}

/**
 * The registry on the embedded SQLite database: projects, resources, their links into projects (alias
 * unique per project, enforced by the schema too) and the parent DAG. Multi-row writes run in one
 * transaction, so a failed registration leaves nothing behind.
 */
export class SqliteRegistryStore implements RegistryStore {
  private readonly stmts;
  /**
   * The parent DAG as child lists, loaded on first use and kept in step with every committed registration:
   * this store is the database's only writer, and walking descendants in memory is what makes resolving
   * a scope over thousands of resources cheap.
   */
  private children: Map<string, string[]> | undefined;
  /** Links this store removed since it opened (see RegistryStore.linkRemovals). */
  private removals = 0;
  /**
   * Group commit of the registry's writes (a file database in WAL mode): each commits without an fsync and
   * is acknowledged once an fsync of the WAL off the serving thread covers it, shared by every write that
   * came meanwhile. With `synchronous = FULL` each registration was an fsync on the serving thread: 5 ms
   * apiece on a busy disk here, so 1,000 registrations took 1.6-5 s however many were sent at once.
   */
  private readonly wal: WalSync | undefined;

  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
    this.wal = !db.memory && db.pragma("journal_mode", { simple: true }) === "wal" ? new WalSync(`${db.name}-wal`) : undefined;
    migrateErasing(db);
    this.stmts = {
      insertProject: db.prepare<[string, number]>("INSERT INTO registry_projects (name, created_at) VALUES (?, ?)"),
      getProject: db.prepare<[string], { name: string; created_at: number }>(
        "SELECT name, created_at FROM registry_projects WHERE name = ?",
      ),
      listProjects: db.prepare<[], { name: string; created_at: number }>("SELECT name, created_at FROM registry_projects ORDER BY name"),
      insertResource: db.prepare<[string, string, string, string, number]>(
        "INSERT INTO registry_resources (id, owner_project, kind, metadata, created_at) VALUES (?, ?, ?, ?, ?)",
      ),
      getResource: db.prepare<[string], ResourceRow & { erasing: number | null }>(
        "SELECT id, owner_project, kind, metadata, created_at, erasing FROM registry_resources WHERE id = ?",
      ),
      resourceState: db.prepare<[string], { owner_project: string; erasing: number | null }>(
        "SELECT owner_project, erasing FROM registry_resources WHERE id = ?",
      ),
      insertLink: db.prepare<[string, string, string]>("INSERT INTO registry_links (project, resource_id, alias) VALUES (?, ?, ?)"),
      insertParent: db.prepare<[string, string, number]>("INSERT INTO registry_parents (child_id, parent_id, position) VALUES (?, ?, ?)"),
      parentsOf: db.prepare<[string], { parent_id: string }>("SELECT parent_id FROM registry_parents WHERE child_id = ? ORDER BY position"),
      linksOf: db.prepare<[string], LinkRow>("SELECT project, resource_id, alias FROM registry_links WHERE resource_id = ? ORDER BY seq"),
      linkByAlias: db.prepare<[string, string], { resource_id: string }>(
        "SELECT resource_id FROM registry_links WHERE project = ? AND alias = ?",
      ),
      linkByResource: db.prepare<[string, string], LinkRow>(
        "SELECT project, resource_id, alias FROM registry_links WHERE project = ? AND resource_id = ?",
      ),
      linksOfProject: db.prepare<[string], LinkRow>(
        "SELECT project, resource_id, alias FROM registry_links WHERE project = ? ORDER BY alias",
      ),
      resourcesOfProject: db.prepare<[string], ResourceRow & { alias: string }>(
        `SELECT r.id, r.owner_project, r.kind, r.metadata, r.created_at, l.alias
           FROM registry_links l JOIN registry_resources r ON r.id = l.resource_id
          WHERE l.project = ? ORDER BY l.alias`,
      ),
      linksOfProjectMembers: db.prepare<[string], LinkRow>(
        `SELECT project, resource_id, alias FROM registry_links
          WHERE resource_id IN (SELECT resource_id FROM registry_links WHERE project = ?) ORDER BY seq`,
      ),
      parentsOfProjectMembers: db.prepare<[string], { child_id: string; parent_id: string }>(
        `SELECT child_id, parent_id FROM registry_parents
          WHERE child_id IN (SELECT resource_id FROM registry_links WHERE project = ?) ORDER BY child_id, position`,
      ),
      linksOfProjects: db.prepare<[string], LinkRow>(
        "SELECT project, resource_id, alias FROM registry_links WHERE project IN (SELECT value FROM json_each(?)) ORDER BY seq",
      ),
      allEdges: db.prepare<[], { child_id: string; parent_id: string }>("SELECT child_id, parent_id FROM registry_parents"),
      projectsPage: db.prepare<[string, number], { name: string; created_at: number }>(
        "SELECT name, created_at FROM registry_projects WHERE name > ? ORDER BY name LIMIT ?",
      ),
      resourcesPage: db.prepare<[string, string, number], ResourceRow & { alias: string }>(
        `SELECT r.id, r.owner_project, r.kind, r.metadata, r.created_at, l.alias
           FROM registry_links l JOIN registry_resources r ON r.id = l.resource_id
          WHERE l.project = ? AND l.alias > ? ORDER BY l.alias LIMIT ?`,
      ),
      linksOfIds: db.prepare<[string], LinkRow>(
        "SELECT project, resource_id, alias FROM registry_links WHERE resource_id IN (SELECT value FROM json_each(?)) ORDER BY seq",
      ),
      parentsOfIds: db.prepare<[string], { child_id: string; parent_id: string }>(
        "SELECT child_id, parent_id FROM registry_parents WHERE child_id IN (SELECT value FROM json_each(?)) ORDER BY child_id, position",
      ),
      deleteLink: db.prepare<[string, string]>("DELETE FROM registry_links WHERE project = ? AND resource_id = ?"),
      ...erasureStatements(db),
    };
  }

  async createProject(name: string): Promise<ProjectRecord> {
    assertProjectName("name", name);
    const createdAt = Date.now();
    try {
      this.commit(() => this.stmts.insertProject.run(name, createdAt));
    } catch (err) {
      if (isSqliteUniqueViolation(err)) throw registryErrors.projectExists(name);
      throw err;
    }
    await this.wal?.sync();
    return { name, createdAt: new Date(createdAt) };
  }

  async getProject(name: string): Promise<ProjectRecord | undefined> {
    const row = this.stmts.getProject.get(name);
    return row ? { name: row.name, createdAt: new Date(row.created_at) } : undefined;
  }

  async listProjects(page?: KeysetPage): Promise<ProjectRecord[]> {
    const rows = page ? this.stmts.projectsPage.all(page.after ?? "", page.limit) : this.stmts.listProjects.all();
    return rows.map((r) => ({ name: r.name, createdAt: new Date(r.created_at) }));
  }

  async registerResource(input: NewResource): Promise<ResourceRecord> {
    const w = resourceToWrite(input);
    const { id, parentIds, createdAt, metadata } = w;
    const write = this.db.transaction(() => {
      this.requireProject(input.project);
      if (this.stmts.getResource.get(id)) throw registryErrors.resourceExists(id);
      if (this.stmts.linkByAlias.get(input.project, input.alias)) {
        throw registryErrors.aliasTaken(input.alias, input.project);
      }
      // Acyclic by construction: parents must already exist, the new id must not, and edges are never
      // changed afterwards, so no path can lead back to the new resource (self-parents are refused above).
      parentIds.forEach((p) => {
        const parent = this.stmts.getResource.get(p);
        if (!parent || parent.erasing !== null) throw new NotFoundError(`parent resource ${p} not found`);
      });
      this.stmts.insertResource.run(id, input.project, input.kind, metadata, createdAt);
      this.stmts.insertLink.run(input.project, id, input.alias);
      parentIds.forEach((p, i) => this.stmts.insertParent.run(id, p, i));
    });
    try {
      this.commit(write);
    } catch (err) {
      if (isSqliteUniqueViolation(err)) throw registryErrors.registrationTaken(id, input.alias, input.project);
      throw err;
    }
    if (this.children) for (const p of parentIds) addChild(this.children, p, id);
    await this.wal?.sync();
    return registeredResource(input, w);
  }

  async linkResource(link: LinkRecord): Promise<LinkRecord> {
    assertAlias("alias", link.alias);
    const idProblem = resourceIdProblem(link.resourceId);
    if (idProblem) throw InvalidArgumentError.field("resource_id", idProblem);
    const write = this.db.transaction(() => {
      this.requireProject(link.project);
      const target = this.stmts.getResource.get(link.resourceId);
      if (!target || target.erasing !== null) throw new NotFoundError(`resource ${link.resourceId} not found`);
      if (this.stmts.linkByResource.get(link.project, link.resourceId)) {
        throw registryErrors.alreadyLinked(link.resourceId, link.project);
      }
      if (this.stmts.linkByAlias.get(link.project, link.alias)) {
        throw registryErrors.aliasTaken(link.alias, link.project);
      }
      this.stmts.insertLink.run(link.project, link.resourceId, link.alias);
    });
    try {
      this.commit(write);
    } catch (err) {
      if (isSqliteUniqueViolation(err)) throw registryErrors.linkTaken(link);
      throw err;
    }
    await this.wal?.sync();
    return { project: link.project, resourceId: link.resourceId, alias: link.alias };
  }

  async getResource(id: string): Promise<ResourceRecord | undefined> {
    const row = this.stmts.getResource.get(id);
    if (!row) return undefined;
    const record = toResourceRecord(
      row,
      this.stmts.parentsOf.all(id).map((p) => p.parent_id),
      this.stmts.linksOf.all(id).map(toLink),
    );
    return row.erasing === null ? record : { ...record, erasing: true };
  }

  async resourceState(id: string): Promise<ResourceState | undefined> {
    const row = this.stmts.resourceState.get(id);
    return row && { ownerProject: row.owner_project, erasing: row.erasing !== null };
  }

  async listResources(project: string, page?: KeysetPage): Promise<Array<ResourceRecord & { alias: string }>> {
    this.requireProject(project);
    if (page) return this.resourcesPage(project, page);
    const links = new Map<string, LinkRecord[]>();
    for (const l of this.stmts.linksOfProjectMembers.all(project)) {
      let list = links.get(l.resource_id);
      if (!list) links.set(l.resource_id, (list = []));
      list.push(toLink(l));
    }
    const parents = new Map<string, string[]>();
    for (const p of this.stmts.parentsOfProjectMembers.all(project)) {
      let list = parents.get(p.child_id);
      if (!list) parents.set(p.child_id, (list = []));
      list.push(p.parent_id);
    }
    return this.stmts.resourcesOfProject.all(project).map((row) => ({
      ...toResourceRecord(row, parents.get(row.id) ?? [], links.get(row.id) ?? []),
      alias: row.alias,
    }));
  }

  async resolveAlias(project: string, aliasOrId: string): Promise<string | undefined> {
    const byAlias = this.stmts.linkByAlias.get(project, aliasOrId);
    if (byAlias) return byAlias.resource_id;
    return isUlid(aliasOrId) ? this.stmts.linkByResource.get(project, aliasOrId)?.resource_id : undefined;
  }

  async duplicateAliases(project: string): Promise<string[]> {
    this.requireProject(project);
    const links = this.stmts.linksOfProject.all(project);
    return aliasCollisions(project, links);
  }

  async linksOfProjects(projects: readonly string[]): Promise<LinkRecord[]> {
    if (projects.length === 0) return [];
    return this.stmts.linksOfProjects.all(JSON.stringify(projects)).map(toLink);
  }

  async withDescendants(ids: readonly string[]): Promise<Set<string>> {
    const children = this.loadChildren();
    const out = new Set<string>();
    const stack = [...ids];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (out.has(id)) continue;
      out.add(id);
      const below = children.get(id);
      if (below) for (const c of below) if (!out.has(c)) stack.push(c);
    }
    return out;
  }

  async close(): Promise<void> {
    // The database handle is shared and closed by its opener (the composition root); the WAL handle is ours.
    await this.wal?.close();
  }

  /**
   * Runs one write (a transaction) as its own commit: without an fsync when the WAL is synced in groups (the
   * caller then awaits `wal.sync()` before acknowledging it), else as the connection commits (`synchronous = FULL`).
   */
  private commit(write: () => void): void {
    const wal = this.wal;
    if (!wal) return write();
    withoutFsync(this.db, write);
    wal.wrote();
  }

  async unlinkResource(project: string, resourceId: string): Promise<LinkRecord> {
    const idProblem = resourceIdProblem(resourceId);
    if (idProblem) throw InvalidArgumentError.field("resource_id", idProblem);
    const removed = this.db.transaction((): LinkRecord => {
      this.requireProject(project);
      const link = this.stmts.linkByResource.get(project, resourceId);
      const refusal = unlinkRefusal(project, resourceId, link !== undefined, this.stmts.getResource.get(resourceId)?.owner_project);
      if (refusal || !link) throw refusal ?? new NotFoundError(`resource ${resourceId} is not linked into ${project}`);
      this.stmts.deleteLink.run(project, resourceId);
      return toLink(link);
    })();
    this.removals += 1;
    return removed;
  }

  linkRemovals(): number {
    return this.removals;
  }

  /** One page of `project`'s resources by alias: the page's rows first, then the links and parents of just those. */
  private resourcesPage(project: string, page: KeysetPage): Array<ResourceRecord & { alias: string }> {
    return this.db.transaction(() => {
      const rows = this.stmts.resourcesPage.all(project, page.after ?? "", page.limit);
      if (rows.length === 0) return [];
      const ids = JSON.stringify(rows.map((r) => r.id));
      const links = new Map<string, LinkRecord[]>();
      for (const l of this.stmts.linksOfIds.all(ids)) {
        let list = links.get(l.resource_id);
        if (!list) links.set(l.resource_id, (list = []));
        list.push(toLink(l));
      }
      const parents = new Map<string, string[]>();
      for (const p of this.stmts.parentsOfIds.all(ids)) {
        let list = parents.get(p.child_id);
        if (!list) parents.set(p.child_id, (list = []));
        list.push(p.parent_id);
      }
      return rows.map((row) => ({ ...toResourceRecord(row, parents.get(row.id) ?? [], links.get(row.id) ?? []), alias: row.alias }));
    })();
  }

  async beginErasure(id: string): Promise<ErasureIntent | undefined> {
    const intent = this.db
      .transaction((): ErasureIntent | undefined => {
        const row = this.stmts.getResource.get(id);
        if (!row) return undefined;
        if (row.erasing !== null) return { resourceId: id, ownerProject: row.owner_project, links: row.erasing };
        const links = this.stmts.deleteLinksOf.run(id).changes;
        this.stmts.deleteEdgesOf.run(id, id);
        this.stmts.markErasing.run(links, id);
        return { resourceId: id, ownerProject: row.owner_project, links };
      })
      .immediate();
    // Links went: scope views computed from them are rebuilt (see linkRemovals).
    if (intent && intent.links > 0) this.removals += 1;
    // The cached DAG forgets the resource on both sides (its children lose it as a parent).
    if (intent && this.children) {
      this.children.delete(id);
      for (const [parent, list] of this.children) {
        const i = list.indexOf(id);
        if (i >= 0) list.splice(i, 1);
        if (list.length === 0) this.children.delete(parent);
      }
    }
    return intent;
  }

  async pendingErasures(): Promise<ErasureIntent[]> {
    return this.stmts.erasing.all().map((r) => ({ resourceId: r.id, ownerProject: r.owner_project, links: r.erasing }));
  }

  /** Deletes the row, then checkpoints the WAL: the catalogue (registry, warm tier) keeps no old page of the erasure. */
  async finishErasure(id: string): Promise<void> {
    this.stmts.deleteErased.run(id);
    await checkpointWal(this.db);
  }

  async deleteProject(name: string): Promise<{ links: number }> {
    assertProjectName("name", name);
    const removed = this.db
      .transaction(() => {
        this.requireProject(name);
        const owned = this.stmts.ownedCount.get(name)!.n;
        if (owned > 0) throw new FailedPreconditionError(`project ${name} owns ${owned} resource(s): delete them first, or set cascade`);
        const links = this.stmts.deleteLinksInto.run(name).changes;
        this.stmts.deleteProject.run(name);
        return { links };
      })
      .immediate();
    if (removed.links > 0) this.removals += 1;
    return removed;
  }

  private loadChildren(): Map<string, string[]> {
    if (!this.children) {
      const children = new Map<string, string[]>();
      for (const e of this.stmts.allEdges.iterate()) addChild(children, e.parent_id, e.child_id);
      this.children = children;
    }
    return this.children;
  }

  private requireProject(name: string): void {
    if (!this.stmts.getProject.get(name)) throw new NotFoundError(`project ${name} not found`);
  }
}
