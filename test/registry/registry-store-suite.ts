import { AlreadyExistsError, InvalidArgumentError, NotFoundError } from "../../src/domain/errors.js";
import { isUlid, newUlid } from "../../src/domain/ulid-id.js";
import type { NewResource, RegistryStore } from "../../src/ports/registry-store.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";

function res(over: Partial<NewResource> = {}): NewResource {
  return { id: "", project: "local/api", alias: "repo", kind: "repo", parentIds: [], metadata: {}, ...over };
}

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return (err as InvalidArgumentError).violations.map((v) => v.field);
  }
  throw new Error("expected INVALID_ARGUMENT");
}

/** What the suite needs from an implementation: a fresh, empty store per test and a way to release it. */
export interface RegistryStoreFixture {
  registry: RegistryStore;
  close(): void;
}

/** How one adapter of the RegistryStore port is run through the shared suite. */
export interface RegistryStoreSuiteOptions extends ConformanceOptions {
  /** A fresh, empty store per test. */
  create: () => RegistryStoreFixture;
}

/**
 * The conformance suite every RegistryStore adapter runs (SQLite now, PostgreSQL later): projects,
 * resources, links, alias rules, the parent DAG and the errors the port promises.
 */
export function runRegistryStoreSuite({ create, ...opts }: RegistryStoreSuiteOptions): void {
  conformanceSuite("RegistryStore", opts, (test) => {
    let fixture: RegistryStoreFixture;
    let reg: RegistryStore;
    beforeEach(() => {
      fixture = create();
      reg = fixture.registry;
      reg.createProject("local/api");
      reg.createProject("local/web");
    });
    afterEach(() => fixture.close());

    test("projects: create, get, list sorted, duplicate is AlreadyExists, bad name is InvalidArgument", () => {
      expect(reg.getProject("local/api")?.name).toBe("local/api");
      expect(reg.getProject("local/none")).toBeUndefined();
      expect(reg.listProjects().map((p) => p.name)).toEqual(["local/api", "local/web"]);
      expect(() => reg.createProject("local/api")).toThrow(AlreadyExistsError);
      expect(fieldsOf(() => reg.createProject("Local/API"))).toEqual(["name"]);
    });

    test("registerResource assigns a ULID and links the owner under its alias", () => {
      const r = reg.registerResource(res({ metadata: { lang: "ts" } }));
      expect(isUlid(r.id)).toBe(true);
      const back = reg.getResource(r.id)!;
      expect(back.ownerProject).toBe("local/api");
      expect(back.links).toEqual([{ project: "local/api", resourceId: r.id, alias: "repo" }]);
      expect(back.metadata.lang).toBe("ts");
      expect(reg.resolveAlias("local/api", "repo")).toBe(r.id);
      expect(reg.resolveAlias("local/api", r.id)).toBe(r.id);
      expect(reg.resolveAlias("local/web", r.id)).toBeUndefined();
    });

    test("a caller-chosen id is kept; reusing it is AlreadyExists; a non-ULID is InvalidArgument", () => {
      const id = newUlid();
      expect(reg.registerResource(res({ id })).id).toBe(id);
      expect(() => reg.registerResource(res({ id, alias: "other" }))).toThrow(AlreadyExistsError);
      expect(fieldsOf(() => reg.registerResource(res({ id: "not-a-ulid" })))).toEqual(["id"]);
    });

    test("alias unique per project, same alias fine in another project", () => {
      reg.registerResource(res());
      expect(() => reg.registerResource(res())).toThrow(AlreadyExistsError);
      expect(() => reg.registerResource(res({ project: "local/web" }))).not.toThrow();
    });

    test("every bad field is reported at once", () => {
      const fields = fieldsOf(() =>
        reg.registerResource(
          res({ project: "nope", alias: "-bad", kind: "", id: "x", parentIds: ["y"], metadata: { "": "v", k: "x".repeat(5000) } }),
        ),
      );
      expect(fields).toEqual(["project", "alias", "kind", "id", "parent_ids[0]", "metadata[]", "metadata[k]"]);
    });

    test("aliases shaped like a ULID (any case) are refused", () => {
      expect(fieldsOf(() => reg.registerResource(res({ alias: newUlid() })))).toEqual(["alias"]);
      expect(fieldsOf(() => reg.registerResource(res({ alias: newUlid().toLowerCase() })))).toEqual(["alias"]);
      expect(fieldsOf(() => reg.registerResource(res({ alias: "a".repeat(129) })))).toEqual(["alias"]);
    });

    test("missing project or parent is NotFound and leaves nothing behind", () => {
      expect(() => reg.registerResource(res({ project: "local/none" }))).toThrow(NotFoundError);
      const id = newUlid();
      expect(() => reg.registerResource(res({ id, parentIds: [newUlid()] }))).toThrow(NotFoundError);
      expect(reg.getResource(id)).toBeUndefined();
      expect(reg.listResources("local/api")).toEqual([]);
    });

    test("self-parent is refused; the DAG expands to descendants; duplicate parents are stored once", () => {
      const id = newUlid();
      expect(fieldsOf(() => reg.registerResource(res({ id, parentIds: [id] })))).toEqual(["parent_ids[0]"]);
      const a = reg.registerResource(res({ alias: "a" }));
      const b = reg.registerResource(res({ alias: "b", parentIds: [a.id, a.id] }));
      const c = reg.registerResource(res({ alias: "c", parentIds: [b.id] }));
      const d = reg.registerResource(res({ alias: "d", parentIds: [a.id, c.id] }));
      expect(reg.getResource(b.id)!.parentIds).toEqual([a.id]);
      expect(reg.withDescendants([a.id])).toEqual(new Set([a.id, b.id, c.id, d.id]));
      expect(reg.withDescendants([c.id])).toEqual(new Set([c.id, d.id]));
      expect(reg.withDescendants([])).toEqual(new Set());
    });

    test("a loop cannot be closed: parents must exist first, and reusing an existing id is AlreadyExists", () => {
      const a = reg.registerResource(res({ alias: "a" }));
      const b = reg.registerResource(res({ alias: "b", parentIds: [a.id] }));
      expect(() => reg.registerResource(res({ id: a.id, alias: "a2", parentIds: [b.id] }))).toThrow(AlreadyExistsError);
    });

    test("descendants stay current: registrations after a walk are seen, failed ones leave no edge", () => {
      const a = reg.registerResource(res({ alias: "a" }));
      expect(reg.withDescendants([a.id])).toEqual(new Set([a.id]));
      const b = reg.registerResource(res({ alias: "b", parentIds: [a.id] }));
      expect(() => reg.registerResource(res({ alias: "b", parentIds: [a.id] }))).toThrow(AlreadyExistsError);
      expect(() => reg.registerResource(res({ alias: "c", parentIds: [a.id, newUlid()] }))).toThrow(NotFoundError);
      expect(reg.withDescendants([a.id])).toEqual(new Set([a.id, b.id]));
    });

    test("linkResource: into another project, twice is AlreadyExists, alias clash is AlreadyExists", () => {
      const a = reg.registerResource(res());
      const other = reg.registerResource(res({ project: "local/web", alias: "taken" }));
      expect(reg.linkResource({ project: "local/web", resourceId: a.id, alias: "api-repo" })).toEqual({
        project: "local/web",
        resourceId: a.id,
        alias: "api-repo",
      });
      expect(() => reg.linkResource({ project: "local/web", resourceId: a.id, alias: "again" })).toThrow(AlreadyExistsError);
      expect(() => reg.linkResource({ project: "local/web", resourceId: other.id, alias: "api-repo" })).toThrow(AlreadyExistsError);
      expect(() => reg.linkResource({ project: "local/none", resourceId: a.id, alias: "x" })).toThrow(NotFoundError);
      expect(() => reg.linkResource({ project: "local/web", resourceId: newUlid(), alias: "x" })).toThrow(NotFoundError);
      expect(reg.getResource(a.id)!.links.map((l) => l.project)).toEqual(["local/api", "local/web"]);
      expect(reg.listResources("local/web").map((r) => [r.alias, r.id])).toEqual([
        ["api-repo", a.id],
        ["taken", other.id],
      ]);
      expect(reg.linksOfProjects(["local/web"]).length).toBe(2);
    });

    test("duplicateAliases reports aliases equal ignoring case, one message each; empty when clean", () => {
      reg.registerResource(res({ alias: "Docs" }));
      expect(reg.duplicateAliases("local/api")).toEqual([]);
      reg.registerResource(res({ alias: "docs" }));
      reg.registerResource(res({ alias: "DOCS" }));
      reg.registerResource(res({ alias: "Api" }));
      reg.registerResource(res({ alias: "api" }));
      const msgs = reg.duplicateAliases("local/api");
      expect(msgs).toHaveLength(2);
      expect(msgs.join("\n")).toContain('"Docs"');
      expect(msgs.join("\n")).toContain('"Api"');
      expect(() => reg.duplicateAliases("local/none")).toThrow(NotFoundError);
    });
  });
}
