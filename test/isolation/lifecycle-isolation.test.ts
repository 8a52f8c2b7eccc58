import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService, type ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { encodePageToken } from "../../src/domain/page-token.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { badFields, expectCode } from "../support/call-failure.js";
import { ensureProject } from "../support/ensure-project.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { testEngine } from "../support/test-engine.js";
import { buildFixture, docUri, ENV, EX, expectViolation, resolve, type IsolationFixture } from "./isolation-fixture.js";

// Attempts to break the lifecycle RPCs of issue 28: other principals' scope ids and forged page tokens in
// the listings, other tenants' fragment ids in DeleteFragment, unlinking links one has no right to, and
// reading an unlinked resource through a scope resolved before the unlink.

let t: TestServer;
let f: IsolationFixture;

beforeAll(async () => {
  t = await startTestServer({ env: ENV });
  f = await buildFixture(t);
}, 120_000);

afterEach(() => {
  expect(preventedLeaks.prevented).toBe(0);
});

afterAll(async () => {
  await t?.close(true);
});

const scopeIds = async (principal: string, pageToken = "", pageSize?: number): Promise<string[]> =>
  (await t.client(ScopeService, principal).listScopes({ pageToken, pageSize })).scopes.map((s) => s.scopeId);

describe("ListScopes never shows another principal's scopes", () => {
  test("forged tokens holding other principals' scope ids, or any position, only move within the caller's own", async () => {
    const writer: string[] = [];
    const other: string[] = [];
    for (let i = 0; i < 3; i++) {
      writer.push((await resolve(t, "writer", { projects: ["local/api"] })).scopeId);
      other.push((await resolve(t, "other", { projects: ["other/secret"] })).scopeId);
    }
    const mine = await scopeIds("writer");
    expect(mine).toEqual(expect.arrayContaining(writer));
    for (const id of other) expect(mine).not.toContain(id);
    // A token positioned at another principal's scope lists the caller's scopes older than it, nothing else.
    const atForeign = await scopeIds("writer", encodePageToken("scopes", other[1]));
    expect(atForeign).toEqual(mine.filter((id) => id < other[1]));
    for (const id of other) expect(atForeign).not.toContain(id);
    // Positions past every id: the caller's whole list again, never more.
    expect(await scopeIds("writer", encodePageToken("scopes", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"))).toEqual(mine);
    // The other principal's own next_page_token, used by the writer: still only the writer's scopes.
    const otherToken = (await t.client(ScopeService, "other").listScopes({ pageSize: 1 })).nextPageToken;
    expect(otherToken).not.toBe("");
    const viaOther = await scopeIds("writer", otherToken);
    for (const id of await scopeIds("other")) expect(viaOther).not.toContain(id);
    // The reader, which resolved nothing here, sees nothing whatever the token says.
    expect(await scopeIds("reader", encodePageToken("scopes", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"))).toEqual([]);
    // A position that is no scope id, or a token of another listing, is refused.
    expect(await badFields(t.client(ScopeService, "writer").listScopes({ pageToken: encodePageToken("scopes", "../../etc") }))).toEqual([
      "page_token",
    ]);
    expect(
      await badFields(t.client(ScopeService, "writer").listScopes({ pageToken: encodePageToken("projects", "other/secret") })),
    ).toEqual(["page_token"]);
  });
});

describe("ListProjects and ListResources tokens cannot widen what the key sees", () => {
  test("a ListProjects position anywhere (another key's token too) only moves through the key's own projects", async () => {
    const all = (await t.client(RegistryService, "writer").listProjects({ pageSize: 1000 })).projects.map((p) => p.name);
    expect(all.every((n) => n.startsWith("local/"))).toBe(true);
    const adminToken = (await t.client(RegistryService, "admin").listProjects({ pageSize: 1 })).nextPageToken;
    for (const pageToken of [adminToken, encodePageToken("projects", "a/a"), encodePageToken("projects", "local/api")]) {
      const names = (await t.client(RegistryService, "writer").listProjects({ pageToken, pageSize: 1000 })).projects.map((p) => p.name);
      expect(names.every((n) => n.startsWith("local/"))).toBe(true);
    }
    // Paging one by one walks exactly the allowed projects, however many others lie between them.
    const oneByOne: string[] = [];
    let token = "";
    do {
      const page = await t.client(RegistryService, "other").listProjects({ pageSize: 1, pageToken: token });
      oneByOne.push(...page.projects.map((p) => p.name));
      token = page.nextPageToken;
    } while (token !== "");
    expect(oneByOne).toEqual(["other/secret"]);
  });

  test("a ListResources token of another project is refused; another key's project is refused before any paging", async () => {
    const otherToken = (await t.client(RegistryService, "admin").listResources({ project: "other/secret", pageSize: 1 })).nextPageToken;
    expect(otherToken).not.toBe("");
    expect(await badFields(t.client(RegistryService, "writer").listResources({ project: "local/api", pageToken: otherToken }))).toEqual([
      "page_token",
    ]);
    await expectViolation(t.client(RegistryService, "writer").listResources({ project: "other/secret", pageToken: otherToken }));
    await expectViolation(
      t
        .client(RegistryService, "writer")
        .listResources({ project: "other/secret", pageToken: encodePageToken("resources", "a", "other/secret") }),
    );
  });
});

describe("DeleteFragment never touches another tenant's or another scope's fragment", () => {
  test("foreign ids answer false and leave the fragment; the same id under two principals names two fragments", async () => {
    const api = await resolve(t, "writer", { projects: ["local/api"] });
    const web = await resolve(t, "writer", { projects: ["local/web"] });
    const secret = await resolve(t, "other", { projects: ["other/secret"] });
    const readerApi = await resolve(t, "reader", { projects: ["local/api"] });
    const tiers = (principal: string, scope: ResourceScope) => t.client(ContextTierService, principal, scope.scopeId);
    const mine = (
      await tiers("writer", api).storeFragment({ fragment: { content: "writer context", projectName: "local/api", tier: Tier.WARM } })
    ).fragment!.fragmentId;
    await tiers("writer", api).storeFragment({
      fragment: { fragmentId: "same-id", content: "writer's same-id", projectName: "local/api" },
    });
    await tiers("other", secret).storeFragment({
      fragment: { fragmentId: "same-id", content: "other's same-id", projectName: "other/secret" },
    });
    for (const [principal, scope] of [
      ["other", secret],
      ["reader", readerApi],
      ["writer", web],
    ] as const) {
      expect((await tiers(principal, scope).deleteFragment({ fragmentId: mine })).deleted).toBe(false);
    }
    expect((await tiers("writer", api).getFragment({ fragmentId: mine })).fragment?.content).toBe("writer context");
    // Other deletes its own "same-id": the writer's stays.
    expect((await tiers("other", secret).deleteFragment({ fragmentId: "same-id" })).deleted).toBe(true);
    expect((await tiers("writer", api).getFragment({ fragmentId: "same-id" })).fragment?.content).toBe("writer's same-id");
    expect((await tiers("other", secret).deleteFragment({ fragmentId: "same-id" })).deleted).toBe(false);
    // Another principal's scope id in the header is NOT_FOUND, as everywhere.
    await expectCode(t.client(ContextTierService, "other", api.scopeId).deleteFragment({ fragmentId: mine }), Code.NotFound);
    expect((await tiers("writer", api).deleteFragment({ fragmentId: mine })).deleted).toBe(true);
  });
});

describe("UnlinkResource", () => {
  test("only a key that may write the project holding the link can remove it; the owner's link never goes", async () => {
    await ensureProject(t, "admin", "local/lend");
    await t.client(RegistryService, "admin").linkResource({ project: "local/lend", resourceId: f.secret, alias: "lent" });
    const lend = await resolve(t, "writer", { projects: ["local/lend"] });
    const search = () => t.client(TextBackendService, "writer", lend.scopeId).search({ query: "mktenantsecret" });
    expect((await search()).results.map((r) => r.resourceId)).toEqual([f.secret]);
    // The resource's owner, with no right on local/lend, cannot remove local/lend's link; nor can a read-only key.
    await expectViolation(t.client(RegistryService, "other").unlinkResource({ project: "local/lend", resourceId: f.secret }));
    await expectCode(
      t.client(RegistryService, "reader").unlinkResource({ project: "local/lend", resourceId: f.secret }),
      Code.PermissionDenied,
    );
    // The writer cannot touch other/secret's own link (not its project), and nobody can remove an owner's link.
    await expectViolation(t.client(RegistryService, "writer").unlinkResource({ project: "other/secret", resourceId: f.secret }));
    await expectCode(
      t.client(RegistryService, "other").unlinkResource({ project: "other/secret", resourceId: f.secret }),
      Code.FailedPrecondition,
    );
    // The writer owns local/lend (not the resource): it may remove its project's link to another tenant's resource.
    const { link } = await t.client(RegistryService, "writer").unlinkResource({ project: "local/lend", resourceId: f.secret });
    expect(link).toMatchObject({ project: "local/lend", resourceId: f.secret, alias: "lent" });
    // The scope resolved before the unlink no longer reaches it; the owner still does.
    expect((await search()).results).toEqual([]);
    await expectViolation(t.client(RagService, "writer", lend.scopeId).fetchContent({ ukoUris: [docUri(f.secret, "readme.md")] }));
    const secret = await resolve(t, "other", { projects: ["other/secret"] });
    expect((await t.client(TextBackendService, "other", secret.scopeId).search({ query: "mktenantsecret" })).results).toHaveLength(1);
    // Gone from the writer's reach altogether: even the id is refused now, as any id it cannot see.
    await expectViolation(t.client(RegistryService, "writer").unlinkResource({ project: "local/lend", resourceId: f.secret }));
  });

  test("a stored scope that reached a resource only through the removed link stops seeing it everywhere; others keep it", async () => {
    const api = await resolve(t, "writer", { projects: ["local/api"] });
    const both = await resolve(t, "writer", { projects: ["local/api", "local/web"] });
    expect(api.resourceIds).toContain(f.shared);
    const tiers = t.client(ContextTierService, "writer", api.scopeId);
    const { fragment } = await tiers.storeFragment({
      fragment: { content: "about shared", projectName: "local/api", resourceId: f.shared },
    });
    const sees = async (scope: ResourceScope) => {
      const text = await t.client(TextBackendService, "writer", scope.scopeId).search({ query: "mkshared" });
      const vector = await t
        .client(VectorBackendService, "writer", scope.scopeId)
        .similaritySearch({ embedding: [0.7, 0, 0.7, 0], topK: 50 });
      const graph = await t.client(GraphBackendService, "writer", scope.scopeId).getTriples({ subject: `${EX}shared` });
      return {
        text: text.results.some((r) => r.resourceId === f.shared),
        vector: vector.results.some((r) => r.resourceId === f.shared),
        graph: graph.triples.length > 0,
      };
    };
    const all = { text: true, vector: true, graph: true };
    const none = { text: false, vector: false, graph: false };
    expect(await sees(api)).toEqual(all);
    await t.client(RegistryService, "writer").unlinkResource({ project: "local/api", resourceId: f.shared });
    expect(await sees(api)).toEqual(none);
    await expectViolation(t.client(RagService, "writer", api.scopeId).fetchContent({ ukoUris: [docUri(f.shared, "shared.md")] }));
    await expectViolation(t.client(ScopeService, "writer", api.scopeId).validateResourceScope({ requestedResourceIds: [f.shared] }));
    await expectCode(tiers.getFragment({ fragmentId: fragment!.fragmentId }), Code.NotFound);
    // The rest of the api scope is untouched, and a scope that also reaches it through local/web still sees it.
    expect((await t.client(TextBackendService, "writer", api.scopeId).search({ query: "mkchild" })).results.length).toBeGreaterThan(0);
    expect(await sees(both)).toEqual(all);
    // The stored scope itself is unchanged (immutable); a new scope over local/api no longer holds it.
    expect((await t.client(ScopeService, "writer").getScope({ scopeId: api.scopeId })).scope?.resourceIds).toContain(f.shared);
    expect((await resolve(t, "writer", { projects: ["local/api"] })).resourceIds).not.toContain(f.shared);
  });
});

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("DeleteFragment leaves no copy on disk", () => {
  test("after deleting a cold fragment no file under the data directory holds its content", async () => {
    const s = await startTestServer({ env: ENV });
    try {
      await ensureProject(s, "writer", "local/disk");
      const { scope } = await s.client(ScopeService, "writer").resolveScope({ projects: ["local/disk"] });
      const tiers = s.client(ContextTierService, "writer", scope!.scopeId);
      const marker = `erasemarker${Date.now().toString(36)}`;
      const content = `${marker} the cold note that must go. ${marker} again, so it is in the summary too.`;
      await tiers.storeFragment({ fragment: { fragmentId: "to-erase", content, projectName: "local/disk", tier: Tier.COLD } });
      const holding = () => filesUnder(s.dataDir).filter((p) => readFileSync(p).includes(marker));
      // The embedded store keeps cold content in files; on PostgreSQL it is in the table (and no file may hold it).
      const inColdFiles = holding().some((p) => p.includes(join("cold", "")));
      expect(inColdFiles).toBe(!testEngine().startsWith("postgres"));
      expect((await tiers.deleteFragment({ fragmentId: "to-erase" })).deleted).toBe(true);
      expect(holding().filter((p) => p.includes(join("cold", "")))).toEqual([]);
      await s.close(false);
      expect(holding()).toEqual([]);
    } finally {
      await s.close(true);
    }
  });
});
