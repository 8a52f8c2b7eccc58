import { InvalidArgumentError } from "../../src/domain/errors.js";
import {
  narrowScopeResources,
  resolveScopeResources,
  type ScopeLink,
  type ScopeResolutionInput,
} from "../../src/domain/scope-resolution.js";

// A small fixed world: ids are ULID-shaped so names resolve as ids.
const REPO = "01JAAAAAAAAAAAAAAAAAAAAAA1";
const SUB = "01JAAAAAAAAAAAAAAAAAAAAAA2"; // child of REPO, linked only into local/api
const LEAF = "01JAAAAAAAAAAAAAAAAAAAAAA3"; // child of SUB, linked nowhere the key allows except via local/api
const DOCS = "01JAAAAAAAAAAAAAAAAAAAAAA4"; // in local/web
const HIDDEN = "01JAAAAAAAAAAAAAAAAAAAAAA5"; // child of REPO linked only into other/x
const WEB_API = "01JAAAAAAAAAAAAAAAAAAAAAA6"; // alias "api" in local/web
const STRANGER = "01JAAAAAAAAAAAAAAAAAAAAAA7"; // unrelated

const LINKS: ScopeLink[] = [
  { project: "local/api", resourceId: REPO, alias: "api" },
  { project: "local/api", resourceId: SUB, alias: "sub" },
  { project: "local/api", resourceId: LEAF, alias: "leaf" },
  { project: "local/web", resourceId: DOCS, alias: "docs" },
  { project: "local/web", resourceId: WEB_API, alias: "api" },
  { project: "other/x", resourceId: HIDDEN, alias: "hidden" },
];

const CHILDREN: Record<string, string[]> = { [REPO]: [SUB, HIDDEN], [SUB]: [LEAF] };

async function withDescendants(ids: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  const stack = [...ids];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (out.has(id)) continue;
    out.add(id);
    stack.push(...(CHILDREN[id] ?? []));
  }
  return out;
}

const visibleToLocal = async (id: string) => LINKS.some((l) => l.resourceId === id && l.project.startsWith("local/"));

function resolve(over: Partial<ScopeResolutionInput>) {
  const projects = over.projects ?? ["local/api"];
  return resolveScopeResources({
    projects,
    links: LINKS.filter((l) => projects.includes(l.project)),
    withDescendants,
    visible: visibleToLocal,
    includeResources: [],
    excludeResources: [],
    expandDescendants: true,
    ...over,
  });
}

async function violationsOf(fn: () => Promise<unknown>): Promise<Array<{ field: string; description: string }>> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return (err as InvalidArgumentError).violations;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("resolveScopeResources", () => {
  test("collects every linked resource, sorted, nothing denied", async () => {
    expect(await resolve({})).toEqual({ resourceIds: [REPO, SUB, LEAF].sort(), deniedResourceIds: [] });
  });

  test("descendant expansion never widens past the key (a child linked only into other/x stays out)", async () => {
    expect((await resolve({})).resourceIds).not.toContain(HIDDEN);
    const admin = await resolve({ visible: async () => true });
    expect(admin.resourceIds).toContain(HIDDEN);
  });

  test("descendants linked elsewhere but visible are included", async () => {
    const r = await resolveScopeResources({
      projects: ["local/web"],
      links: [...LINKS.filter((l) => l.project === "local/web")],
      withDescendants: async (ids) => new Set([...ids, ...(ids.includes(DOCS) ? [REPO] : [])]),
      visible: visibleToLocal,
      includeResources: [],
      excludeResources: [],
      expandDescendants: true,
    });
    expect(r.resourceIds).toEqual([DOCS, REPO, WEB_API].sort());
  });

  test("allow keeps the named resource with its descendants", async () => {
    expect((await resolve({ includeResources: ["sub"] })).resourceIds).toEqual([SUB, LEAF].sort());
  });

  test("allow without expansion keeps only the named resource", async () => {
    expect((await resolve({ includeResources: ["sub"], expandDescendants: false })).resourceIds).toEqual([SUB]);
  });

  test("expand_descendants=false keeps exactly the linked resources: no descendant linked elsewhere joins", async () => {
    // HIDDEN descends from REPO and is visible to this caller, but it is linked into other/x only.
    expect(await resolve({ visible: async () => true, expandDescendants: false })).toEqual({
      resourceIds: [REPO, SUB, LEAF].sort(),
      deniedResourceIds: [],
    });
    expect((await resolve({ visible: async () => true })).resourceIds).toContain(HIDDEN);
    const web = await resolveScopeResources({
      projects: ["local/web"],
      links: LINKS.filter((l) => l.project === "local/web"),
      withDescendants: async (ids) => new Set([...ids, ...(ids.includes(DOCS) ? [REPO, SUB] : [])]),
      visible: visibleToLocal,
      includeResources: [],
      excludeResources: [],
      expandDescendants: false,
    });
    expect(web.resourceIds).toEqual([DOCS, WEB_API].sort());
  });

  test("expand_descendants=false: an allow list cannot name a descendant that is not linked", async () => {
    const v = await violationsOf(() => resolve({ visible: async () => true, includeResources: [HIDDEN], expandDescendants: false }));
    expect(v.map((x) => x.field)).toEqual(["include_resources[0]"]);
  });

  test("deny drops the named resource with its descendants and records them", async () => {
    const r = await resolve({ excludeResources: [SUB] });
    expect(r.resourceIds).toEqual([REPO]);
    expect(r.deniedResourceIds).toEqual([SUB, LEAF].sort());
  });

  test("deny without expansion drops only the named resource", async () => {
    const r = await resolve({ excludeResources: ["sub"], expandDescendants: false });
    expect(r.resourceIds).toEqual([REPO, LEAF].sort());
    expect(r.deniedResourceIds).toEqual([SUB]);
  });

  test("deny after allow: denying what allow kept removes it", async () => {
    const r = await resolve({ includeResources: ["api"], excludeResources: ["leaf"] });
    expect(r.resourceIds).toEqual([REPO, SUB].sort());
    expect(r.deniedResourceIds).toEqual([LEAF]);
  });

  test("denied ids only count what the allow list kept", async () => {
    const r = await resolve({ includeResources: ["leaf"], excludeResources: ["api"] });
    expect(r.resourceIds).toEqual([]);
    expect(r.deniedResourceIds).toEqual([LEAF]);
  });

  test("a bare alias applies in every scoped project that has it", async () => {
    const r = await resolve({ projects: ["local/api", "local/web"], excludeResources: ["api"] });
    expect(r.resourceIds).toEqual([DOCS]);
    expect(r.deniedResourceIds).toEqual([REPO, SUB, LEAF, WEB_API].sort());
  });

  test("namespace/project:alias picks one of colliding aliases", async () => {
    const r = await resolve({ projects: ["local/api", "local/web"], excludeResources: ["local/web:api"] });
    expect(r.resourceIds).toEqual([REPO, SUB, LEAF, DOCS].sort());
    expect(r.deniedResourceIds).toEqual([WEB_API]);
  });

  test("a ULID names the resource it is", async () => {
    expect((await resolve({ includeResources: [LEAF] })).resourceIds).toEqual([LEAF]);
  });

  test("a ULID may name a descendant reached through expansion", async () => {
    const r = await resolve({ projects: ["local/api"], visible: async () => true, excludeResources: [HIDDEN] });
    expect(r.deniedResourceIds).toEqual([HIDDEN]);
  });

  test("every name that matches nothing is INVALID_ARGUMENT naming its field, all at once", async () => {
    const v = await violationsOf(() =>
      resolve({
        includeResources: ["api", "apii"],
        excludeResources: ["sub", STRANGER, "other/x:hidden", "local/web:docs", "local/api:nope", "bad name!", "", ":x"],
      }),
    );
    expect(v.map((x) => x.field)).toEqual([
      "include_resources[1]",
      "exclude_resources[1]",
      "exclude_resources[2]",
      "exclude_resources[3]",
      "exclude_resources[4]",
      "exclude_resources[5]",
      "exclude_resources[6]",
      "exclude_resources[7]",
    ]);
    expect(v[2].description).toContain("not one of the scope's projects");
  });

  test("an id of a resource the key cannot see is refused like a typo", async () => {
    const v = await violationsOf(() => resolve({ excludeResources: [HIDDEN] }));
    expect(v).toEqual([{ field: "exclude_resources[0]", description: expect.stringContaining("not in the scope's projects") }]);
  });

  test("an alias of a project outside the scope does not match", async () => {
    const v = await violationsOf(() => resolve({ includeResources: ["docs"] }));
    expect(v[0].field).toBe("include_resources[0]");
  });

  test("resolution is deterministic regardless of link order", async () => {
    const a = await resolve({ projects: ["local/api", "local/web"] });
    const b = await resolveScopeResources({
      projects: ["local/web", "local/api"],
      links: [...LINKS].reverse(),
      withDescendants,
      visible: visibleToLocal,
      includeResources: [],
      excludeResources: [],
      expandDescendants: true,
    });
    expect(b).toEqual(a);
  });
});

describe("narrowScopeResources", () => {
  let parent: Awaited<ReturnType<typeof resolve>>;
  let base: Parameters<typeof narrowScopeResources>[0];
  beforeAll(async () => {
    parent = await resolve({ projects: ["local/api", "local/web"] });
    base = {
      parentResourceIds: parent.resourceIds,
      parentProjects: ["local/api", "local/web"],
      childProjects: ["local/api", "local/web"],
      childLinks: LINKS.filter((l) => l.project.startsWith("local/")),
      withDescendants,
      denyResourceIds: [] as string[],
      expandDescendants: true,
    };
  });

  test("no change keeps the parent's resources", async () => {
    expect(await narrowScopeResources(base)).toEqual({ resourceIds: parent.resourceIds, deniedResourceIds: [] });
  });

  test("a project subset keeps resources linked into it and their descendants within the parent", async () => {
    const r = await narrowScopeResources({
      ...base,
      childProjects: ["local/api"],
      childLinks: LINKS.filter((l) => l.project === "local/api"),
    });
    expect(r.resourceIds).toEqual([REPO, SUB, LEAF].sort());
    expect(r.deniedResourceIds).toEqual([DOCS, WEB_API].sort());
  });

  test("deny removes with descendants; ids the parent lacks change nothing", async () => {
    const r = await narrowScopeResources({ ...base, denyResourceIds: [SUB, STRANGER, HIDDEN] });
    expect(r.resourceIds).toEqual([REPO, DOCS, WEB_API].sort());
    expect(r.deniedResourceIds).toEqual([SUB, LEAF].sort());
  });

  test("denying an ancestor the parent does not hold changes nothing, even for its descendants the parent holds", async () => {
    const r = await narrowScopeResources({ ...base, parentResourceIds: [SUB, LEAF], denyResourceIds: [REPO] });
    expect(r).toEqual({ resourceIds: [SUB, LEAF].sort(), deniedResourceIds: [] });
  });

  test("deny without expansion removes only the id", async () => {
    const r = await narrowScopeResources({ ...base, denyResourceIds: [SUB], expandDescendants: false });
    expect(r.resourceIds).toEqual([REPO, LEAF, DOCS, WEB_API].sort());
  });

  test("a project subset of a parent without expansion keeps exactly the resources linked into it", async () => {
    // DOCS descends from REPO here and the parent holds both, but DOCS is linked into local/web only.
    const dag = async (ids: readonly string[]) => new Set([...(await withDescendants(ids)), ...(ids.includes(REPO) ? [DOCS] : [])]);
    const childLinks = LINKS.filter((l) => l.project === "local/api");
    const flat = await narrowScopeResources({
      ...base,
      childProjects: ["local/api"],
      childLinks,
      withDescendants: dag,
      expandDescendants: false,
    });
    expect(flat.resourceIds).toEqual([REPO, SUB, LEAF].sort());
    expect(flat.deniedResourceIds).toEqual([DOCS, WEB_API].sort());
    const expanded = await narrowScopeResources({ ...base, childProjects: ["local/api"], childLinks, withDescendants: dag });
    expect(expanded.resourceIds).toEqual([REPO, SUB, LEAF, DOCS].sort());
  });

  test("a child can never hold anything its parent lacked", async () => {
    const small = await narrowScopeResources({ ...base, parentResourceIds: [DOCS] });
    expect(small.resourceIds).toEqual([DOCS]);
  });
});
