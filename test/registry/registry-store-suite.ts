import { AlreadyExistsError, FailedPreconditionError, InvalidArgumentError, NotFoundError } from "../../src/domain/errors.js";
import { isUlid, newUlid } from "../../src/domain/ulid-id.js";
import type { KeysetPage, NewResource, RegistryStore } from "../../src/ports/registry-store.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";

function res(over: Partial<NewResource> = {}): NewResource {
  return { id: "", project: "local/api", alias: "repo", kind: "repo", parentIds: [], metadata: {}, ...over };
}

async function fieldsOf(fn: () => Promise<unknown>): Promise<string[]> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return (err as InvalidArgumentError).violations.map((v) => v.field);
  }
  throw new Error("expected INVALID_ARGUMENT");
}

/** What the suite needs from an implementation: a fresh, empty store per test and a way to release it. */
export interface RegistryStoreFixture {
  registry: RegistryStore;
  close(): void | Promise<void>;
}

/** How one adapter of the RegistryStore port is run through the shared suite. */
export interface RegistryStoreSuiteOptions extends ConformanceOptions {
  /** A fresh, empty store per test (a networked engine may take a moment to hand one out). */
  create: () => RegistryStoreFixture | Promise<RegistryStoreFixture>;
}

/**
 * The conformance suite every RegistryStore adapter runs (SQLite now, PostgreSQL later): projects,
 * resources, links, alias rules, the parent DAG and the errors the port promises.
 */
export function runRegistryStoreSuite({ create, ...opts }: RegistryStoreSuiteOptions): void {
  conformanceSuite("RegistryStore", opts, (test) => {
    let fixture: RegistryStoreFixture;
    let reg: RegistryStore;
    beforeEach(async () => {
      fixture = await create();
      reg = fixture.registry;
      await reg.createProject("local/api");
      await reg.createProject("local/web");
    });
    afterEach(async () => {
      await fixture.close();
    });

    test("projects: create, get, list sorted, duplicate is AlreadyExists, bad name is InvalidArgument", async () => {
      expect((await reg.getProject("local/api"))?.name).toBe("local/api");
      expect(await reg.getProject("local/none")).toBeUndefined();
      expect((await reg.listProjects()).map((p) => p.name)).toEqual(["local/api", "local/web"]);
      await expect(reg.createProject("local/api")).rejects.toThrow(AlreadyExistsError);
      expect(await fieldsOf(() => reg.createProject("Local/API"))).toEqual(["name"]);
    });

    test("registerResource assigns a ULID and links the owner under its alias", async () => {
      const r = await reg.registerResource(res({ metadata: { lang: "ts" } }));
      expect(isUlid(r.id)).toBe(true);
      const back = (await reg.getResource(r.id))!;
      expect(back.ownerProject).toBe("local/api");
      expect(back.links).toEqual([{ project: "local/api", resourceId: r.id, alias: "repo" }]);
      expect(back.metadata.lang).toBe("ts");
      expect(await reg.resolveAlias("local/api", "repo")).toBe(r.id);
      expect(await reg.resolveAlias("local/api", r.id)).toBe(r.id);
      expect(await reg.resolveAlias("local/web", r.id)).toBeUndefined();
    });

    test("a caller-chosen id is kept; reusing it is AlreadyExists; a non-ULID is InvalidArgument", async () => {
      const id = newUlid();
      expect((await reg.registerResource(res({ id }))).id).toBe(id);
      await expect(reg.registerResource(res({ id, alias: "other" }))).rejects.toThrow(AlreadyExistsError);
      expect(await fieldsOf(() => reg.registerResource(res({ id: "not-a-ulid" })))).toEqual(["id"]);
    });

    test("alias unique per project, same alias fine in another project", async () => {
      await reg.registerResource(res());
      await expect(reg.registerResource(res())).rejects.toThrow(AlreadyExistsError);
      await expect(reg.registerResource(res({ project: "local/web" }))).resolves.not.toThrow();
    });

    test("every bad field is reported at once", async () => {
      const fields = await fieldsOf(() =>
        reg.registerResource(
          res({ project: "nope", alias: "-bad", kind: "", id: "x", parentIds: ["y"], metadata: { "": "v", k: "x".repeat(5000) } }),
        ),
      );
      expect(fields).toEqual(["project", "alias", "kind", "id", "parent_ids[0]", "metadata[]", "metadata[k]"]);
    });

    test("aliases shaped like a ULID (any case) are refused", async () => {
      expect(await fieldsOf(() => reg.registerResource(res({ alias: newUlid() })))).toEqual(["alias"]);
      expect(await fieldsOf(() => reg.registerResource(res({ alias: newUlid().toLowerCase() })))).toEqual(["alias"]);
      expect(await fieldsOf(() => reg.registerResource(res({ alias: "a".repeat(129) })))).toEqual(["alias"]);
    });

    test("missing project or parent is NotFound and leaves nothing behind", async () => {
      await expect(reg.registerResource(res({ project: "local/none" }))).rejects.toThrow(NotFoundError);
      const id = newUlid();
      await expect(reg.registerResource(res({ id, parentIds: [newUlid()] }))).rejects.toThrow(NotFoundError);
      expect(await reg.getResource(id)).toBeUndefined();
      expect(await reg.listResources("local/api")).toEqual([]);
    });

    test("self-parent is refused; the DAG expands to descendants; duplicate parents are stored once", async () => {
      const id = newUlid();
      expect(await fieldsOf(() => reg.registerResource(res({ id, parentIds: [id] })))).toEqual(["parent_ids[0]"]);
      const a = await reg.registerResource(res({ alias: "a" }));
      const b = await reg.registerResource(res({ alias: "b", parentIds: [a.id, a.id] }));
      const c = await reg.registerResource(res({ alias: "c", parentIds: [b.id] }));
      const d = await reg.registerResource(res({ alias: "d", parentIds: [a.id, c.id] }));
      expect((await reg.getResource(b.id))!.parentIds).toEqual([a.id]);
      expect(await reg.withDescendants([a.id])).toEqual(new Set([a.id, b.id, c.id, d.id]));
      expect(await reg.withDescendants([c.id])).toEqual(new Set([c.id, d.id]));
      expect(await reg.withDescendants([])).toEqual(new Set());
    });

    test("a loop cannot be closed: parents must exist first, and reusing an existing id is AlreadyExists", async () => {
      const a = await reg.registerResource(res({ alias: "a" }));
      const b = await reg.registerResource(res({ alias: "b", parentIds: [a.id] }));
      await expect(reg.registerResource(res({ id: a.id, alias: "a2", parentIds: [b.id] }))).rejects.toThrow(AlreadyExistsError);
    });

    test("descendants stay current: registrations after a walk are seen, failed ones leave no edge", async () => {
      const a = await reg.registerResource(res({ alias: "a" }));
      expect(await reg.withDescendants([a.id])).toEqual(new Set([a.id]));
      const b = await reg.registerResource(res({ alias: "b", parentIds: [a.id] }));
      await expect(reg.registerResource(res({ alias: "b", parentIds: [a.id] }))).rejects.toThrow(AlreadyExistsError);
      await expect(reg.registerResource(res({ alias: "c", parentIds: [a.id, newUlid()] }))).rejects.toThrow(NotFoundError);
      expect(await reg.withDescendants([a.id])).toEqual(new Set([a.id, b.id]));
    });

    test("linkResource: into another project, twice is AlreadyExists, alias clash is AlreadyExists", async () => {
      const a = await reg.registerResource(res());
      const other = await reg.registerResource(res({ project: "local/web", alias: "taken" }));
      expect(await reg.linkResource({ project: "local/web", resourceId: a.id, alias: "api-repo" })).toEqual({
        project: "local/web",
        resourceId: a.id,
        alias: "api-repo",
      });
      await expect(reg.linkResource({ project: "local/web", resourceId: a.id, alias: "again" })).rejects.toThrow(AlreadyExistsError);
      await expect(reg.linkResource({ project: "local/web", resourceId: other.id, alias: "api-repo" })).rejects.toThrow(AlreadyExistsError);
      await expect(reg.linkResource({ project: "local/none", resourceId: a.id, alias: "x" })).rejects.toThrow(NotFoundError);
      await expect(reg.linkResource({ project: "local/web", resourceId: newUlid(), alias: "x" })).rejects.toThrow(NotFoundError);
      expect((await reg.getResource(a.id))!.links.map((l) => l.project)).toEqual(["local/api", "local/web"]);
      expect((await reg.listResources("local/web")).map((r) => [r.alias, r.id])).toEqual([
        ["api-repo", a.id],
        ["taken", other.id],
      ]);
      expect((await reg.linksOfProjects(["local/web"])).length).toBe(2);
    });

    test("duplicateAliases reports aliases equal ignoring case, one message each; empty when clean", async () => {
      await reg.registerResource(res({ alias: "Docs" }));
      expect(await reg.duplicateAliases("local/api")).toEqual([]);
      await reg.registerResource(res({ alias: "docs" }));
      await reg.registerResource(res({ alias: "DOCS" }));
      await reg.registerResource(res({ alias: "Api" }));
      await reg.registerResource(res({ alias: "api" }));
      const msgs = await reg.duplicateAliases("local/api");
      expect(msgs).toHaveLength(2);
      expect(msgs.join("\n")).toContain('"Docs"');
      expect(msgs.join("\n")).toContain('"Api"');
      await expect(reg.duplicateAliases("local/none")).rejects.toThrow(NotFoundError);
    });

    test("listProjects pages by name after a position, stable while projects are added or removed between pages", async () => {
      for (const n of ["a/one", "b/two", "c/three", "local/x", "z/last"]) await reg.createProject(n);
      const names = async (page: KeysetPage) => (await reg.listProjects(page)).map((p) => p.name);
      expect(await names({ limit: 3 })).toEqual(["a/one", "b/two", "c/three"]);
      expect(await names({ after: "c/three", limit: 3 })).toEqual(["local/api", "local/web", "local/x"]);
      // A project added before the position is never seen again; one after it is.
      await reg.createProject("a/zero");
      await reg.createProject("y/new");
      expect(await names({ after: "local/x", limit: 3 })).toEqual(["y/new", "z/last"]);
      // The position need not exist any more (nor ever have): the page starts after it.
      expect(await names({ after: "local/m", limit: 2 })).toEqual(["local/web", "local/x"]);
      expect(await names({ after: "z/last", limit: 5 })).toEqual([]);
      expect((await reg.listProjects()).length).toBe(9);
    });

    test("listResources pages by alias with each resource's links and parents", async () => {
      const base = await reg.registerResource(res({ alias: "base" }));
      const ids: Record<string, string> = { base: base.id };
      for (const alias of ["d", "a", "c", "b"]) ids[alias] = (await reg.registerResource(res({ alias, parentIds: [base.id] }))).id;
      await reg.linkResource({ project: "local/web", resourceId: ids.c, alias: "c-in-web" });
      const first = await reg.listResources("local/api", { limit: 2 });
      expect(first.map((r) => r.alias)).toEqual(["a", "b"]);
      expect(first[0]).toMatchObject({ id: ids.a, ownerProject: "local/api", parentIds: [base.id] });
      const second = await reg.listResources("local/api", { after: "b", limit: 2 });
      expect(second.map((r) => r.alias)).toEqual(["base", "c"]);
      expect(second[1].links.map((l) => [l.project, l.alias])).toEqual([
        ["local/api", "c"],
        ["local/web", "c-in-web"],
      ]);
      expect((await reg.listResources("local/api", { after: "c", limit: 2 })).map((r) => r.alias)).toEqual(["d"]);
      expect(await reg.listResources("local/api", { after: "d", limit: 2 })).toEqual([]);
      // Only the named project's links: the page of local/web holds its one link.
      expect((await reg.listResources("local/web", { limit: 10 })).map((r) => r.alias)).toEqual(["c-in-web"]);
      await expect(reg.listResources("local/none", { limit: 1 })).rejects.toThrow(NotFoundError);
      // The paged and unpaged listings agree.
      expect((await reg.listResources("local/api")).map((r) => r.alias)).toEqual(["a", "b", "base", "c", "d"]);
    });

    test("unlinkResource removes a link and its alias; the owner's link and a missing one are refused", async () => {
      const a = await reg.registerResource(res({ alias: "a" }));
      await reg.linkResource({ project: "local/web", resourceId: a.id, alias: "a-web" });
      const before = reg.linkRemovals();
      await expect(reg.unlinkResource("local/api", a.id)).rejects.toThrow(FailedPreconditionError);
      await expect(reg.unlinkResource("local/api", a.id)).rejects.toThrow(/delete the resource/);
      expect(reg.linkRemovals()).toBe(before);
      expect(await reg.unlinkResource("local/web", a.id)).toEqual({ project: "local/web", resourceId: a.id, alias: "a-web" });
      expect(reg.linkRemovals()).not.toBe(before);
      expect((await reg.getResource(a.id))!.links.map((l) => l.project)).toEqual(["local/api"]);
      expect(await reg.listResources("local/web")).toEqual([]);
      expect(await reg.linksOfProjects(["local/web"])).toEqual([]);
      expect(await reg.resolveAlias("local/web", "a-web")).toBeUndefined();
      expect(await reg.resolveAlias("local/web", a.id)).toBeUndefined();
      // A second unlink, an unknown resource and an unknown project are NotFound; a malformed id InvalidArgument.
      await expect(reg.unlinkResource("local/web", a.id)).rejects.toThrow(NotFoundError);
      await expect(reg.unlinkResource("local/web", newUlid())).rejects.toThrow(NotFoundError);
      await expect(reg.unlinkResource("local/none", a.id)).rejects.toThrow(NotFoundError);
      expect(await fieldsOf(() => reg.unlinkResource("local/web", "nope"))).toEqual(["resource_id"]);
      // The alias is free again, and the resource can be linked back.
      const b = await reg.registerResource(res({ project: "local/web", alias: "a-web" }));
      expect(await reg.resolveAlias("local/web", "a-web")).toBe(b.id);
      await reg.linkResource({ project: "local/web", resourceId: a.id, alias: "back" });
      expect(await reg.resolveAlias("local/web", "back")).toBe(a.id);
    });

    test("erasure: the intent removes links and edges at once, is idempotent, pending until finished; the row then goes", async () => {
      const parent = await reg.registerResource(res({ alias: "parent" }));
      const doomed = await reg.registerResource(res({ alias: "doomed", parentIds: [parent.id] }));
      const child = await reg.registerResource(res({ alias: "child", parentIds: [doomed.id] }));
      await reg.linkResource({ project: "local/web", resourceId: doomed.id, alias: "borrowed" });
      expect(await reg.resourceState(doomed.id)).toEqual({ ownerProject: "local/api", erasing: false });
      expect(await reg.resourceState(newUlid())).toBeUndefined();
      const intent = await reg.beginErasure(doomed.id);
      expect(intent).toEqual({ resourceId: doomed.id, ownerProject: "local/api", links: 2 });
      // Erasing, it keeps its owner until its row goes (the indexer refuses writes to it: NotFound).
      expect(await reg.resourceState(doomed.id)).toEqual({ ownerProject: "local/api", erasing: true });
      expect(await reg.resourceState(child.id)).toEqual({ ownerProject: "local/api", erasing: false });
      expect(await reg.resourceState(newUlid())).toBeUndefined();
      expect(await reg.resourceState("not an id")).toBeUndefined();
      expect(await reg.beginErasure(doomed.id)).toEqual(intent);
      expect(await reg.beginErasure(newUlid())).toBeUndefined();
      const marked = (await reg.getResource(doomed.id))!;
      expect({ erasing: marked.erasing, links: marked.links, parents: marked.parentIds }).toEqual({
        erasing: true,
        links: [],
        parents: [],
      });
      expect((await reg.getResource(child.id))!.parentIds).toEqual([]);
      expect([...(await reg.withDescendants([parent.id]))]).toEqual([parent.id]);
      expect((await reg.listResources("local/api")).map((r) => r.alias).sort()).toEqual(["child", "parent"]);
      expect(await reg.listResources("local/web")).toEqual([]);
      expect(await reg.resolveAlias("local/api", "doomed")).toBeUndefined();
      await expect(reg.linkResource({ project: "local/web", resourceId: doomed.id, alias: "again" })).rejects.toThrow(NotFoundError);
      await expect(reg.registerResource(res({ alias: "late", parentIds: [doomed.id] }))).rejects.toThrow(NotFoundError);
      expect(await reg.pendingErasures()).toEqual([intent]);
      await reg.finishErasure(doomed.id);
      expect(await reg.getResource(doomed.id)).toBeUndefined();
      expect(await reg.resourceState(doomed.id)).toBeUndefined();
      expect(await reg.pendingErasures()).toEqual([]);
    });

    test("deleteProject: FailedPrecondition while it owns resources (erasing ones too); removes links into it", async () => {
      const owned = await reg.registerResource(res({ project: "local/web", alias: "owned" }));
      const guest = await reg.registerResource(res({ alias: "guest" }));
      await reg.linkResource({ project: "local/web", resourceId: guest.id, alias: "guest" });
      await expect(reg.deleteProject("local/web")).rejects.toThrow(/owns 1 resource/);
      await reg.beginErasure(owned.id);
      await expect(reg.deleteProject("local/web")).rejects.toThrow(/owns 1 resource/);
      await reg.finishErasure(owned.id);
      expect(await reg.deleteProject("local/web")).toEqual({ links: 1 });
      expect(await reg.getProject("local/web")).toBeUndefined();
      expect((await reg.getResource(guest.id))!.links.map((l) => l.project)).toEqual(["local/api"]);
      await expect(reg.deleteProject("local/web")).rejects.toThrow(NotFoundError);
    });
  });
}
