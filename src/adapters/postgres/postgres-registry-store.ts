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
import pg from "pg";
import { groupBy } from "../kit/group-by.js";
import { inTransaction, isUniqueViolation, type PostgresClient, type PostgresPool } from "./postgres-pool.js";

/**
 * The registry on PostgreSQL, with the embedded store's tables, rules and domain errors. Every write is
 * one transaction, so a failed registration leaves nothing behind; the schema's unique constraints
 * settle races between servers (the loser gets AlreadyExists). Unlike the embedded store, the parent DAG
 * is not cached: other servers write to the same database, so descendants are walked in SQL (a
 * recursive query) and are always current.
 */
export class PostgresRegistryStore implements RegistryStore {
  /** Link removals this store made or heard of (its own NOTIFY and other servers') since it opened (see RegistryStore.linkRemovals). */
  private removals = 0;
  /** The connection LISTENing on LINKS_CHANNEL, when `listen` opened one. */
  private listener: pg.Client | undefined;

  constructor(private readonly pool: PostgresPool) {}

  async createProject(name: string): Promise<ProjectRecord> {
    assertProjectName("name", name);
    const createdAt = Date.now();
    try {
      await this.pool.query("INSERT INTO registry_projects (name, created_at) VALUES ($1, $2)", [name, createdAt]);
    } catch (err) {
      if (isUniqueViolation(err)) throw registryErrors.projectExists(name);
      throw err;
    }
    return { name, createdAt: new Date(createdAt) };
  }

  async getProject(name: string): Promise<ProjectRecord | undefined> {
    const { rows } = await this.pool.query<{ name: string; created_at: number }>(
      "SELECT name, created_at FROM registry_projects WHERE name = $1",
      [name],
    );
    return rows[0] ? { name: rows[0].name, createdAt: new Date(rows[0].created_at) } : undefined;
  }

  async listProjects(page?: KeysetPage): Promise<ProjectRecord[]> {
    const { rows } = page
      ? await this.pool.query<{ name: string; created_at: number }>(
          "SELECT name, created_at FROM registry_projects WHERE name > $1 ORDER BY name LIMIT $2",
          [page.after ?? "", page.limit],
        )
      : await this.pool.query<{ name: string; created_at: number }>("SELECT name, created_at FROM registry_projects ORDER BY name");
    return rows.map((r) => ({ name: r.name, createdAt: new Date(r.created_at) }));
  }

  async registerResource(input: NewResource): Promise<ResourceRecord> {
    const w = resourceToWrite(input);
    const { id, parentIds, createdAt, metadata } = w;
    try {
      await inTransaction(this.pool, async (c) => {
        await requireProject(c, input.project);
        if ((await c.query("SELECT 1 FROM registry_resources WHERE id = $1", [id])).rowCount) {
          throw registryErrors.resourceExists(id);
        }
        if ((await c.query("SELECT 1 FROM registry_links WHERE project = $1 AND alias = $2", [input.project, input.alias])).rowCount) {
          throw registryErrors.aliasTaken(input.alias, input.project);
        }
        // Acyclic by construction, as in the embedded store: parents must exist, the new id must not,
        // and edges never change afterwards. `FOR KEY SHARE` keeps each parent row in place until commit.
        if (parentIds.length > 0) {
          const found = new Set(
            (
              await c.query<{ id: string }>(
                "SELECT id FROM registry_resources WHERE id = ANY($1::text[]) AND erasing IS NULL FOR KEY SHARE",
                [parentIds],
              )
            ).rows.map((r) => r.id),
          );
          const missing = parentIds.find((p) => !found.has(p));
          if (missing !== undefined) throw new NotFoundError(`parent resource ${missing} not found`);
        }
        await c.query("INSERT INTO registry_resources (id, owner_project, kind, metadata, created_at) VALUES ($1, $2, $3, $4, $5)", [
          id,
          input.project,
          input.kind,
          metadata,
          createdAt,
        ]);
        await c.query("INSERT INTO registry_links (project, resource_id, alias) VALUES ($1, $2, $3)", [input.project, id, input.alias]);
        if (parentIds.length > 0) {
          await c.query(
            "INSERT INTO registry_parents (child_id, parent_id, position) SELECT $1, p, i - 1 FROM unnest($2::text[]) WITH ORDINALITY AS t (p, i)",
            [id, parentIds],
          );
        }
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw registryErrors.registrationTaken(id, input.alias, input.project);
      throw err;
    }
    return registeredResource(input, w);
  }

  async linkResource(link: LinkRecord): Promise<LinkRecord> {
    assertAlias("alias", link.alias);
    if (!isUlid(link.resourceId))
      throw InvalidArgumentError.field("resource_id", `"${link.resourceId.slice(0, 80)}" is not a resource id (ULID)`);
    try {
      await inTransaction(this.pool, async (c) => {
        await requireProject(c, link.project);
        if (
          !(await c.query("SELECT 1 FROM registry_resources WHERE id = $1 AND erasing IS NULL FOR KEY SHARE", [link.resourceId])).rowCount
        ) {
          throw new NotFoundError(`resource ${link.resourceId} not found`);
        }
        if (
          (await c.query("SELECT 1 FROM registry_links WHERE project = $1 AND resource_id = $2", [link.project, link.resourceId])).rowCount
        ) {
          throw registryErrors.alreadyLinked(link.resourceId, link.project);
        }
        if ((await c.query("SELECT 1 FROM registry_links WHERE project = $1 AND alias = $2", [link.project, link.alias])).rowCount) {
          throw registryErrors.aliasTaken(link.alias, link.project);
        }
        await c.query("INSERT INTO registry_links (project, resource_id, alias) VALUES ($1, $2, $3)", [
          link.project,
          link.resourceId,
          link.alias,
        ]);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw registryErrors.linkTaken(link);
      throw err;
    }
    return { project: link.project, resourceId: link.resourceId, alias: link.alias };
  }

  async getResource(id: string): Promise<ResourceRecord | undefined> {
    return inTransaction(
      this.pool,
      async (c) => {
        const row = (
          await c.query<ResourceRow & { erasing: number | null }>(
            "SELECT id, owner_project, kind, metadata, created_at, erasing FROM registry_resources WHERE id = $1",
            [id],
          )
        ).rows[0];
        if (!row) return undefined;
        const parents = await c.query<{ parent_id: string }>(
          "SELECT parent_id FROM registry_parents WHERE child_id = $1 ORDER BY position",
          [id],
        );
        const links = await c.query<LinkRow>("SELECT project, resource_id, alias FROM registry_links WHERE resource_id = $1 ORDER BY seq", [
          id,
        ]);
        const record = toResourceRecord(
          row,
          parents.rows.map((p) => p.parent_id),
          links.rows.map(toLink),
        );
        return row.erasing === null ? record : { ...record, erasing: true };
      },
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }

  async resourceState(id: string): Promise<ResourceState | undefined> {
    const { rows } = await this.pool.query<{ owner_project: string; erasing: boolean }>(
      "SELECT owner_project, erasing IS NOT NULL AS erasing FROM registry_resources WHERE id = $1",
      [id],
    );
    return rows[0] && { ownerProject: rows[0].owner_project, erasing: rows[0].erasing };
  }

  async listResources(project: string, page?: KeysetPage): Promise<Array<ResourceRecord & { alias: string }>> {
    return inTransaction(
      this.pool,
      async (c) => {
        await requireProject(c, project);
        // The page's rows first (by alias, after the position), then the links and parents of just those.
        const resources = page
          ? await c.query<ResourceRow & { alias: string }>(
              `SELECT r.id, r.owner_project, r.kind, r.metadata, r.created_at, l.alias
                 FROM registry_links l JOIN registry_resources r ON r.id = l.resource_id
                WHERE l.project = $1 AND l.alias > $2 ORDER BY l.alias LIMIT $3`,
              [project, page.after ?? "", page.limit],
            )
          : await c.query<ResourceRow & { alias: string }>(
              `SELECT r.id, r.owner_project, r.kind, r.metadata, r.created_at, l.alias
                 FROM registry_links l JOIN registry_resources r ON r.id = l.resource_id
                WHERE l.project = $1 ORDER BY l.alias`,
              [project],
            );
        if (resources.rows.length === 0) return [];
        const ids = resources.rows.map((r) => r.id);
        const links = groupBy(
          (
            await c.query<LinkRow>(
              "SELECT project, resource_id, alias FROM registry_links WHERE resource_id = ANY($1::text[]) ORDER BY seq",
              [ids],
            )
          ).rows,
          (l) => l.resource_id,
        );
        const parents = groupBy(
          (
            await c.query<{ child_id: string; parent_id: string }>(
              "SELECT child_id, parent_id FROM registry_parents WHERE child_id = ANY($1::text[]) ORDER BY child_id, position",
              [ids],
            )
          ).rows,
          (p) => p.child_id,
        );
        return resources.rows.map((row) => ({
          ...toResourceRecord(
            row,
            (parents.get(row.id) ?? []).map((p) => p.parent_id),
            (links.get(row.id) ?? []).map(toLink),
          ),
          alias: row.alias,
        }));
      },
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }

  async resolveAlias(project: string, aliasOrId: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ resource_id: string; by_alias: boolean }>(
      `SELECT resource_id, alias = $2 AS by_alias FROM registry_links
        WHERE project = $1 AND (alias = $2 OR ($3 AND resource_id = $2))
        ORDER BY by_alias DESC LIMIT 1`,
      [project, aliasOrId, isUlid(aliasOrId)],
    );
    return rows[0]?.resource_id;
  }

  async duplicateAliases(project: string): Promise<string[]> {
    const links = await inTransaction(
      this.pool,
      async (c) => {
        await requireProject(c, project);
        return (
          await c.query<LinkRow>("SELECT project, resource_id, alias FROM registry_links WHERE project = $1 ORDER BY alias", [project])
        ).rows;
      },
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
    return aliasCollisions(project, links);
  }

  async linksOfProjects(projects: readonly string[]): Promise<LinkRecord[]> {
    if (projects.length === 0) return [];
    const { rows } = await this.pool.query<LinkRow>(
      "SELECT project, resource_id, alias FROM registry_links WHERE project = ANY($1::text[]) ORDER BY seq",
      [[...projects]],
    );
    return rows.map(toLink);
  }

  async withDescendants(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const { rows } = await this.pool.query<{ id: string }>(
      `WITH RECURSIVE d (id) AS (
         SELECT unnest($1::text[]) COLLATE "C"
         UNION
         SELECT p.child_id FROM registry_parents p JOIN d ON p.parent_id = d.id
       ) SELECT id FROM d`,
      [[...ids]],
    );
    return new Set(rows.map((r) => r.id));
  }

  async close(): Promise<void> {
    // The pool is shared and closed by its opener (openPostgres).
  }

  async unlinkResource(project: string, resourceId: string): Promise<LinkRecord> {
    const idProblem = resourceIdProblem(resourceId);
    if (idProblem) throw InvalidArgumentError.field("resource_id", idProblem);
    const removed = await inTransaction(this.pool, async (c) => {
      await requireProject(c, project);
      // The link row is locked, so a concurrent unlink of the same link waits and then finds nothing.
      const link = (
        await c.query<LinkRow>(
          "SELECT project, resource_id, alias FROM registry_links WHERE project = $1 AND resource_id = $2 FOR UPDATE",
          [project, resourceId],
        )
      ).rows[0];
      const owner = (await c.query<{ owner_project: string }>("SELECT owner_project FROM registry_resources WHERE id = $1", [resourceId]))
        .rows[0]?.owner_project;
      const refusal = unlinkRefusal(project, resourceId, link !== undefined, owner);
      if (refusal || !link) throw refusal ?? new NotFoundError(`resource ${resourceId} is not linked into ${project}`);
      await c.query("DELETE FROM registry_links WHERE project = $1 AND resource_id = $2", [project, resourceId]);
      // Delivered on commit to every server LISTENing (this one too): their cached scope views are rebuilt.
      await c.query("SELECT pg_notify($1, '')", [LINKS_CHANNEL]);
      return toLink(link);
    });
    this.removals += 1;
    return removed;
  }

  linkRemovals(): number {
    return this.removals;
  }

  /**
   * Hears the link removals other servers on the database commit (a NOTIFY on LINKS_CHANNEL), so that
   * `linkRemovals` moves for them too and this server rebuilds the scope views they touch. Without it (a
   * connection pooler that cannot LISTEN), only this server's own removals are seen until it restarts.
   */
  async listen(url: string): Promise<void> {
    const client = new pg.Client({ connectionString: url, application_name: "acms-registry-listen" });
    client.on("error", () => {
      // A lost listener: count it as a removal (views are rebuilt once, to be safe) and stop hearing.
      this.removals += 1;
      this.listener = undefined;
    });
    client.on("notification", (n) => {
      if (n.channel === LINKS_CHANNEL) this.removals += 1;
    });
    await client.connect();
    await client.query(`LISTEN ${LINKS_CHANNEL}`);
    this.listener = client;
  }

  /** Stops hearing other servers' removals (the pool stays: its opener closes it). */
  async stopListening(): Promise<void> {
    const client = this.listener;
    this.listener = undefined;
    await client?.end().catch(() => undefined);
  }

  async beginErasure(id: string): Promise<ErasureIntent | undefined> {
    const intent = await inTransaction(this.pool, async (c): Promise<ErasureIntent | undefined> => {
      // The row lock orders this intent after any registration or link naming the resource (FOR KEY SHARE there).
      const row = (
        await c.query<{ owner_project: string; erasing: number | null }>(
          "SELECT owner_project, erasing FROM registry_resources WHERE id = $1 FOR UPDATE",
          [id],
        )
      ).rows[0];
      if (!row) return undefined;
      if (row.erasing !== null) return { resourceId: id, ownerProject: row.owner_project, links: row.erasing };
      const links = (await c.query("DELETE FROM registry_links WHERE resource_id = $1", [id])).rowCount ?? 0;
      await c.query("DELETE FROM registry_parents WHERE child_id = $1 OR parent_id = $1", [id]);
      await c.query("UPDATE registry_resources SET erasing = $1 WHERE id = $2", [links, id]);
      // Links went: every server's cached scope views are rebuilt (as for an unlink).
      if (links > 0) await c.query("SELECT pg_notify($1, '')", [LINKS_CHANNEL]);
      return { resourceId: id, ownerProject: row.owner_project, links };
    });
    if (intent && intent.links > 0) this.removals += 1;
    return intent;
  }

  async pendingErasures(): Promise<ErasureIntent[]> {
    const { rows } = await this.pool.query<{ id: string; owner_project: string; erasing: number }>(
      "SELECT id, owner_project, erasing FROM registry_resources WHERE erasing IS NOT NULL ORDER BY id",
    );
    return rows.map((r) => ({ resourceId: r.id, ownerProject: r.owner_project, links: r.erasing }));
  }

  async finishErasure(id: string): Promise<void> {
    await this.pool.query("DELETE FROM registry_resources WHERE id = $1 AND erasing IS NOT NULL", [id]);
  }

  async deleteProject(name: string): Promise<{ links: number }> {
    assertProjectName("name", name);
    const removed = await inTransaction(this.pool, async (c) => {
      const project = await c.query("SELECT 1 FROM registry_projects WHERE name = $1 FOR UPDATE", [name]);
      if (!project.rowCount) throw new NotFoundError(`project ${name} not found`);
      const owned = Number(
        (await c.query<{ n: string }>("SELECT count(*)::text AS n FROM registry_resources WHERE owner_project = $1", [name])).rows[0].n,
      );
      if (owned > 0) throw new FailedPreconditionError(`project ${name} owns ${owned} resource(s): delete them first, or set cascade`);
      const links = (await c.query("DELETE FROM registry_links WHERE project = $1", [name])).rowCount ?? 0;
      await c.query("DELETE FROM registry_projects WHERE name = $1", [name]);
      if (links > 0) await c.query("SELECT pg_notify($1, '')", [LINKS_CHANNEL]);
      return { links };
    });
    if (removed.links > 0) this.removals += 1;
    return removed;
  }
}

/** The NOTIFY channel of committed link removals. */
const LINKS_CHANNEL = "acms_registry_links";

async function requireProject(c: PostgresClient, name: string): Promise<void> {
  if (!(await c.query("SELECT 1 FROM registry_projects WHERE name = $1", [name])).rowCount)
    throw new NotFoundError(`project ${name} not found`);
}
