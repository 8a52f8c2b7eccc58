import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteRegistryStore } from "../../src/adapters/sqlite/sqlite-registry-store.js";
import { SqliteScopeStore } from "../../src/adapters/sqlite/sqlite-scope-store.js";
import { AlreadyExistsError } from "../../src/domain/errors.js";
import type { ResourceScope } from "../../src/domain/scope.js";
import { newUlid } from "../../src/domain/ulid-id.js";
import type { NewResource } from "../../src/ports/registry-store.js";
import { runRegistryStoreSuite } from "./registry-store-suite.js";

runRegistryStoreSuite({
  name: "SQLite",
  create: () => {
    const db = openSqliteDatabase(":memory:");
    return {
      registry: new SqliteRegistryStore(db),
      close: () => {
        db.close();
      },
    };
  },
});

let db: SqliteDatabase;
let reg: SqliteRegistryStore;

beforeEach(async () => {
  db = openSqliteDatabase(":memory:");
  reg = new SqliteRegistryStore(db);
  await reg.createProject("local/api");
});
afterEach(() => db.close());

function res(over: Partial<NewResource> = {}): NewResource {
  return { id: "", project: "local/api", alias: "repo", kind: "repo", parentIds: [], metadata: {}, ...over };
}

describe("SqliteRegistryStore specifics", () => {
  test("duplicateAliases reports an alias equal to the id of another resource linked in (rows written before the rule)", async () => {
    const a = await reg.registerResource(res({ alias: "a" }));
    const b = await reg.registerResource(res({ alias: "b" }));
    db.prepare("UPDATE registry_links SET alias = ? WHERE resource_id = ?").run(a.id.toLowerCase(), b.id);
    expect(await reg.duplicateAliases("local/api")).toEqual([expect.stringContaining("equals the id of another resource")]);
  });

  test("data survives reopening the database file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acms-reg-"));
    const file = `${dir}/acms.db`;
    const db1 = openSqliteDatabase(file);
    const r1 = new SqliteRegistryStore(db1);
    await r1.createProject("local/p");
    const a = await r1.registerResource(res({ project: "local/p" }));
    const b = await r1.registerResource(res({ project: "local/p", alias: "child", parentIds: [a.id] }));
    db1.close();
    const db2 = openSqliteDatabase(file);
    const r2 = new SqliteRegistryStore(db2);
    expect(await r2.resolveAlias("local/p", "repo")).toBe(a.id);
    expect(await r2.withDescendants([a.id])).toEqual(new Set([a.id, b.id]));
    expect((await r2.getResource(b.id))?.parentIds).toEqual([a.id]);
    db2.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("SqliteScopeStore", () => {
  const scope = (over: Partial<ResourceScope> = {}): ResourceScope => ({
    scopeId: newUlid(),
    owner: "agent",
    resourceIds: ["01JAAAAAAAAAAAAAAAAAAAAAA1"],
    projectNames: ["local/api"],
    temporalScope: "recent",
    includeResources: ["x"],
    excludeResources: [],
    includePaths: ["src/**"],
    excludePaths: [],
    parentScopeId: "",
    expandDescendants: false,
    deniedResourceIds: [],
    createdAt: new Date(1_700_000_000_000),
    ...over,
  });

  test("saves, reads back from the database, caches, and refuses a second save of the same id", async () => {
    const store = new SqliteScopeStore(db);
    const s = scope();
    await store.save(s);
    await expect(store.save(s)).rejects.toThrow(AlreadyExistsError);
    const fresh = new SqliteScopeStore(db);
    expect(fresh.isCached(s.scopeId)).toBe(false);
    expect(await fresh.get(s.scopeId)).toEqual(s);
    expect(fresh.isCached(s.scopeId)).toBe(true);
    expect(Object.isFrozen(await fresh.get(s.scopeId))).toBe(true);
    expect(await fresh.get(newUlid())).toBeUndefined();
  });

  test("the cache is bounded and unknown ids are never cached", async () => {
    const store = new SqliteScopeStore(db, { cacheSize: 2 });
    const [a, b, c] = [scope(), scope(), scope()];
    for (const s of [a, b, c]) await store.save(s);
    expect(store.isCached(a.scopeId)).toBe(false);
    expect(await store.get(a.scopeId)).toEqual(a);
    expect(store.isCached(b.scopeId)).toBe(false);
    const unknown = newUlid();
    await store.get(unknown);
    expect(store.isCached(unknown)).toBe(false);
  });
});
