import { Code } from "@connectrpc/connect";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { badFields, expectCode } from "../support/call-failure.js";
import { ensureProject } from "../support/ensure-project.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { PROTOCOLS } from "./contract-fixture.js";

// The lifecycle RPCs of issue 28 as API.md names them, through the real server in both protocols: paging on
// ListProjects, ListResources and ListScopes, UnlinkResource and DeleteFragment.

let t: TestServer;
const PROJECTS = ["local/p00", "local/p01", "local/p02", "local/p03", "local/p04", "local/p05", "local/p06"];
/** Resource ids of local/p00 by alias. */
const R: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestServer();
  for (const p of PROJECTS) await ensureProject(t, "writer", p);
  await ensureProject(t, "other", "other/x");
  const reg = t.client(RegistryService, "writer");
  for (const alias of ["e", "a", "d", "c", "b"]) {
    R[alias] = (await reg.registerResource({ project: "local/p00", alias, kind: "repo" })).resource!.id;
  }
}, 60_000);

afterAll(async () => {
  await t?.close(true);
});

/** Every page of a listing, walked with `page_size` = `size`. */
async function walk<T>(size: number, call: (token: string) => Promise<{ items: T[]; next: string }>): Promise<T[][]> {
  const pages: T[][] = [];
  let token = "";
  do {
    const { items, next } = await call(token);
    pages.push(items);
    token = next;
    expect(pages.length).toBeLessThan(100);
  } while (token !== "");
  return pages;
}

describe.each(PROTOCOLS)("paging (%s)", (protocol) => {
  const reg = () => t.client(RegistryService, "writer", undefined, protocol);

  test("ListProjects pages by name: page_size rows a page, next_page_token empty on the last", async () => {
    const all = (await reg().listProjects({ pageSize: 1000 })).projects.map((p) => p.name);
    expect(all).toEqual([...all].sort());
    expect(all).toEqual(expect.arrayContaining(PROJECTS));
    expect(all.every((n) => n.startsWith("local/"))).toBe(true);
    const pages = await walk(3, async (pageToken) => {
      const r = await reg().listProjects({ pageSize: 3, pageToken });
      return { items: r.projects.map((p) => p.name), next: r.nextPageToken };
    });
    expect(pages.flat()).toEqual(all);
    expect(pages.slice(0, -1).every((p) => p.length === 3)).toBe(true);
    // Absent page_size is 100: one page here, with no next token.
    const unpaged = await reg().listProjects({});
    expect(unpaged.projects.map((p) => p.name)).toEqual(all);
    expect(unpaged.nextPageToken).toBe("");
    // Exactly a page's worth: no token promising an empty page.
    expect((await reg().listProjects({ pageSize: all.length })).nextPageToken).toBe("");
  });

  test("ListResources pages by alias", async () => {
    const pages = await walk(2, async (pageToken) => {
      const r = await reg().listResources({ project: "local/p00", pageSize: 2, pageToken });
      return { items: r.resources.map((x) => x.alias), next: r.nextPageToken };
    });
    expect(pages).toEqual([["a", "b"], ["c", "d"], ["e"]]);
    const first = await reg().listResources({ project: "local/p00", pageSize: 1 });
    expect(first.resources[0]).toMatchObject({ id: R.a, alias: "a", ownerProject: "local/p00" });
  });

  test("a page is stable while rows are added or removed between pages", async () => {
    const first = (await reg().listProjects({ pageSize: 2 })).projects.map((p) => p.name);
    const token = (await reg().listProjects({ pageSize: 2 })).nextPageToken;
    const last = first[1];
    // One project before the position (never shown again), one right after it (shown next).
    await ensureProject(t, "writer", `local/0-before-${protocol}`);
    await ensureProject(t, "writer", `${last}-${protocol}`);
    const second = (await reg().listProjects({ pageSize: 2, pageToken: token })).projects.map((p) => p.name);
    expect(second[0]).toBe(`${last}-${protocol}`);
    expect(second.every((n) => n > last)).toBe(true);
  });

  test("page_size out of range and malformed or foreign page tokens are INVALID_ARGUMENT naming the field", async () => {
    for (const pageSize of [0, -1, 1001]) {
      expect(await badFields(reg().listProjects({ pageSize }))).toEqual(["page_size"]);
      expect(await badFields(reg().listResources({ project: "local/p00", pageSize }))).toEqual(["page_size"]);
      expect(await badFields(t.client(ScopeService, "writer", undefined, protocol).listScopes({ pageSize }))).toEqual(["page_size"]);
    }
    expect((await reg().listProjects({ pageSize: 1000 })).nextPageToken).toBe("");
    for (const pageToken of ["not a token", "eyJ2IjoxfQ", "%%%", "x".repeat(2000), Buffer.from("[1,2]").toString("base64url")]) {
      expect(await badFields(reg().listProjects({ pageToken }))).toEqual(["page_token"]);
    }
    // A token of one listing is refused by another, and a ListResources token by the listing of another project.
    const projectsToken = (await reg().listProjects({ pageSize: 1 })).nextPageToken;
    const resourcesToken = (await reg().listResources({ project: "local/p00", pageSize: 1 })).nextPageToken;
    expect(await badFields(reg().listResources({ project: "local/p00", pageToken: projectsToken }))).toEqual(["page_token"]);
    expect(await badFields(reg().listResources({ project: "local/p01", pageToken: resourcesToken }))).toEqual(["page_token"]);
    expect(await badFields(t.client(ScopeService, "writer", undefined, protocol).listScopes({ pageToken: resourcesToken }))).toEqual([
      "page_token",
    ]);
  });
});

describe("ListScopes", () => {
  test("lists the caller's scopes newest first, paged, never another principal's", async () => {
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) {
      mine.push((await t.client(ScopeService, "reader").resolveScope({ projects: ["local/p00"] })).scope!.scopeId);
    }
    const foreign = (await t.client(ScopeService, "other").resolveScope({ projects: ["other/x"] })).scope!.scopeId;
    const child = (await t.client(ScopeService, "reader", mine[4]).narrowScope({ denyResourceIds: [R.a] })).scope!;
    const pages = await walk(2, async (pageToken) => {
      const r = await t.client(ScopeService, "reader").listScopes({ pageSize: 2, pageToken });
      return { items: r.scopes.map((s) => s.scopeId), next: r.nextPageToken };
    });
    const expected = [child.scopeId, ...[...mine].reverse()];
    expect(pages.flat()).toEqual(expected);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 2]);
    expect(pages.flat()).not.toContain(foreign);
    const full = await t.client(ScopeService, "reader").listScopes({});
    expect(full.scopes.map((s) => s.scopeId)).toEqual(expected);
    expect(full.scopes[0]).toMatchObject({ parentScopeId: mine[4], projectNames: ["local/p00"] });
    expect(full.scopes[0].resourceIds).not.toContain(R.a);
    expect((await t.client(ScopeService, "other").listScopes({})).scopes.map((s) => s.scopeId)).toEqual([foreign]);
  });
});

describe.each(PROTOCOLS)("UnlinkResource (%s)", (protocol) => {
  const reg = () => t.client(RegistryService, "writer", undefined, protocol);

  test("removes the link and its alias from a project that does not own the resource; answers the link", async () => {
    const project = `local/unlink-${protocol}`;
    await ensureProject(t, "writer", project);
    await reg().linkResource({ project, resourceId: R.b, alias: "borrowed" });
    const { link } = await reg().unlinkResource({ project, resourceId: R.b });
    expect(link).toMatchObject({ project, resourceId: R.b, alias: "borrowed" });
    expect((await reg().listResources({ project })).resources).toEqual([]);
    await expectCode(reg().resolveAlias({ project, aliasOrId: "borrowed" }), Code.NotFound);
    // Gone: a second unlink is NOT_FOUND; the owner's link still stands.
    await expectCode(reg().unlinkResource({ project, resourceId: R.b }), Code.NotFound);
    expect((await reg().resolveAlias({ project: "local/p00", aliasOrId: "b" })).resourceId).toBe(R.b);
  });

  test("the owning project's link is FAILED_PRECONDITION, saying to delete the resource", async () => {
    const err = await expectCode(reg().unlinkResource({ project: "local/p00", resourceId: R.c }), Code.FailedPrecondition);
    expect(err.rawMessage).toMatch(/delete the resource/i);
  });

  test("a missing link is NOT_FOUND; malformed fields are INVALID_ARGUMENT; a read-only key is refused", async () => {
    await expectCode(reg().unlinkResource({ project: "local/p01", resourceId: R.c }), Code.NotFound);
    expect(await badFields(reg().unlinkResource({ project: "local/p01", resourceId: "nope" }))).toEqual(["resource_id"]);
    expect(await badFields(reg().unlinkResource({ project: "Bad Name", resourceId: R.c }))).toEqual(["project"]);
    await reg().linkResource({ project: "local/p02", resourceId: R.c, alias: `c-${protocol}` });
    await expectCode(
      t.client(RegistryService, "reader", undefined, protocol).unlinkResource({ project: "local/p02", resourceId: R.c }),
      Code.PermissionDenied,
    );
    await reg().unlinkResource({ project: "local/p02", resourceId: R.c });
  });
});

describe.each(PROTOCOLS)("DeleteFragment (%s)", (protocol) => {
  test("removes the fragment from whichever tier holds it and says whether it existed", async () => {
    const scope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/p00"] })).scope!.scopeId;
    const tiers = t.client(ContextTierService, "writer", scope, protocol);
    for (const tier of [Tier.HOT, Tier.WARM, Tier.COLD]) {
      const id = `del-${protocol}-${tier}`;
      await tiers.storeFragment({
        fragment: { fragmentId: id, content: `context to delete in tier ${tier}`, projectName: "local/p00", tier },
      });
      const before = await tiers.getMetrics({});
      expect((await tiers.deleteFragment({ fragmentId: id })).deleted).toBe(true);
      await expectCode(tiers.getFragment({ fragmentId: id }), Code.NotFound);
      const after = await tiers.getMetrics({});
      const population = (m: typeof after) => [m.hotPopulation, m.warmPopulation, m.coldPopulation].map(Number);
      const dropped = population(before).map((n, i) => n - population(after)[i]);
      expect(dropped).toEqual([Tier.HOT, Tier.WARM, Tier.COLD].map((x) => (x === tier ? 1 : 0)));
      expect((await tiers.deleteFragment({ fragmentId: id })).deleted).toBe(false);
    }
    expect((await tiers.deleteFragment({ fragmentId: "never-stored" })).deleted).toBe(false);
    expect(await badFields(tiers.deleteFragment({ fragmentId: "" }))).toEqual(["fragment_id"]);
    expect(await badFields(tiers.deleteFragment({ fragmentId: "no spaces/allowed" }))).toEqual(["fragment_id"]);
    await expectCode(
      t.client(ContextTierService, "writer", undefined, protocol).deleteFragment({ fragmentId: "x" }),
      Code.FailedPrecondition,
    );
  });
});
