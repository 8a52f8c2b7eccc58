import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService, type ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { isUlid, newUlid } from "../../src/domain/ulid-id.js";
import { failure } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

async function expectCode(p: Promise<unknown>, code: Code): Promise<ConnectError> {
  const err = await failure(p);
  expect(Code[err.code]).toBe(Code[code]);
  return err;
}

async function badFields(p: Promise<unknown>): Promise<string[]> {
  const err = await expectCode(p, Code.InvalidArgument);
  const [detail] = err.findDetails(BadRequestSchema);
  expect(detail).toBeDefined();
  return detail.fieldViolations.map((v) => v.field);
}

async function violation(p: Promise<unknown>) {
  const err = await expectCode(p, Code.PermissionDenied);
  const [sv] = err.findDetails(ScopeViolationSchema);
  expect(sv).toBeDefined();
  return { err, sv };
}

let t: TestServer;
/** Resource ids by alias: REPO > SUB > LEAF in local/api; DOCS and WEB_API (alias "api") in local/web; HIDDEN (child of REPO) in other/x. */
const ids: Record<string, string> = {};

const scopeClient = (principal: string, scopeId?: string) => t.client(ScopeService, principal, scopeId);

async function resolve(principal: string, req: Parameters<ReturnType<typeof scopeClient>["resolveScope"]>[0]): Promise<ResourceScope> {
  return (await scopeClient(principal).resolveScope(req)).scope!;
}

beforeAll(async () => {
  t = await startTestServer();
  const admin = t.client(RegistryService, "admin");
  for (const name of ["local/api", "local/web", "local/empty", "local/later", "other/x"]) await admin.createProject({ name });
  const reg = async (project: string, alias: string, parentIds: string[] = []) =>
    (await admin.registerResource({ project, alias, kind: "repo", parentIds })).resource!.id;
  ids.REPO = await reg("local/api", "api");
  ids.SUB = await reg("local/api", "sub", [ids.REPO]);
  ids.LEAF = await reg("local/api", "leaf", [ids.SUB]);
  ids.DOCS = await reg("local/web", "docs");
  ids.WEB_API = await reg("local/web", "api");
  ids.HIDDEN = await reg("other/x", "hidden", [ids.REPO]);
});
afterAll(async () => {
  await t.close(true);
});

const sorted = (...xs: string[]) => [...xs].sort();

describe("ResolveScope", () => {
  test("collects the projects' resources and their visible descendants, sorted, with defaults", async () => {
    const s = await resolve("reader", { projects: ["local/api"] });
    expect(isUlid(s.scopeId)).toBe(true);
    expect(s.resourceIds).toEqual(sorted(ids.REPO, ids.SUB, ids.LEAF));
    expect(s.projectNames).toEqual(["local/api"]);
    expect(s.temporalScope).toBe("current");
    expect(s.expandDescendants).toBe(true);
    expect(s.parentScopeId).toBe("");
    expect(s.deniedResourceIds).toEqual([]);
    expect(s.createdAt?.seconds).toBeGreaterThan(0n);
  });

  test("descendant expansion never widens past the key: HIDDEN only for a key that allows other/x", async () => {
    expect((await resolve("writer", { projects: ["local/api"] })).resourceIds).not.toContain(ids.HIDDEN);
    expect((await resolve("admin", { projects: ["local/api"] })).resourceIds).toContain(ids.HIDDEN);
  });

  test("the lists are returned as given; duplicate projects are stored once", async () => {
    const s = await resolve("reader", {
      projects: ["local/api", "local/api", "local/web"],
      includeResources: ["api"],
      excludeResources: ["local/api:leaf"],
      includePaths: ["src/**"],
      excludePaths: ["**/*.lock"],
      temporalScope: "recent",
    });
    expect(s.projectNames).toEqual(["local/api", "local/web"]);
    expect(s.includeResources).toEqual(["api"]);
    expect(s.excludeResources).toEqual(["local/api:leaf"]);
    expect(s.includePaths).toEqual(["src/**"]);
    expect(s.excludePaths).toEqual(["**/*.lock"]);
    expect(s.temporalScope).toBe("recent");
    expect(s.resourceIds).toEqual(sorted(ids.REPO, ids.SUB, ids.WEB_API));
    expect(s.deniedResourceIds).toEqual([ids.LEAF]);
  });

  test("a bare alias applies in every scoped project (colliding aliases across projects)", async () => {
    const s = await resolve("reader", { projects: ["local/api", "local/web"], excludeResources: ["api"] });
    expect(s.resourceIds).toEqual([ids.DOCS]);
    expect(s.deniedResourceIds).toEqual(sorted(ids.REPO, ids.SUB, ids.LEAF, ids.WEB_API));
  });

  test("namespace/project:alias and ULIDs pick exactly one resource", async () => {
    const s = await resolve("reader", { projects: ["local/api", "local/web"], excludeResources: ["local/web:api", ids.LEAF] });
    expect(s.resourceIds).toEqual(sorted(ids.REPO, ids.SUB, ids.DOCS));
  });

  test("expand_descendants=false: allow and deny act on the named resources only", async () => {
    const s = await resolve("reader", { projects: ["local/api"], excludeResources: ["sub"], expandDescendants: false });
    expect(s.expandDescendants).toBe(false);
    expect(s.resourceIds).toEqual(sorted(ids.REPO, ids.LEAF));
    const allow = await resolve("reader", { projects: ["local/api"], includeResources: ["sub"], expandDescendants: false });
    expect(allow.resourceIds).toEqual([ids.SUB]);
  });

  test("expand_descendants=false keeps exactly the linked resources: a visible descendant linked elsewhere stays out", async () => {
    // HIDDEN is REPO's child, linked into other/x only: admin's key sees it, so only expansion brings it in.
    expect((await resolve("admin", { projects: ["local/api"] })).resourceIds).toContain(ids.HIDDEN);
    const flat = await resolve("admin", { projects: ["local/api"], expandDescendants: false });
    expect(flat.resourceIds).toEqual(sorted(ids.REPO, ids.SUB, ids.LEAF));
    expect(flat.expandDescendants).toBe(false);
    expect(
      await badFields(
        scopeClient("admin").resolveScope({ projects: ["local/api"], includeResources: [ids.HIDDEN], expandDescendants: false }),
      ),
    ).toEqual(["include_resources[0]"]);
    // Narrowing keeps the parent's setting.
    const child = await scopeClient("admin", flat.scopeId).narrowScope({ denyResourceIds: [ids.SUB] });
    expect(child.scope!.resourceIds).toEqual(sorted(ids.REPO, ids.LEAF));
    expect(child.scope!.expandDescendants).toBe(false);
  });

  test("a name matching nothing is INVALID_ARGUMENT naming the field; typos never widen or empty a scope", async () => {
    expect(
      await badFields(
        scopeClient("reader").resolveScope({
          projects: ["local/api"],
          includeResources: ["api", "apii"],
          excludeResources: ["sub", "docs", "local/web:docs", ids.HIDDEN, newUlid(), "local/api:", "not an alias"],
        }),
      ),
    ).toEqual([
      "include_resources[1]",
      "exclude_resources[1]",
      "exclude_resources[2]",
      "exclude_resources[3]",
      "exclude_resources[4]",
      "exclude_resources[5]",
      "exclude_resources[6]",
    ]);
  });

  test("bad input of every field is INVALID_ARGUMENT naming it", async () => {
    const c = scopeClient("reader");
    expect(await badFields(c.resolveScope({ projects: [] }))).toEqual(["projects"]);
    expect(await badFields(c.resolveScope({ projects: ["local/api", "Not A Project"] }))).toEqual(["projects[1]"]);
    expect(await badFields(c.resolveScope({ projects: ["local/api"], temporalScope: "yesterday" }))).toEqual(["temporal_scope"]);
    expect(await badFields(c.resolveScope({ projects: ["local/api"], temporalScope: "CURRENT" }))).toEqual(["temporal_scope"]);
    expect(await badFields(c.resolveScope({ projects: ["local/api"], includePaths: ["src/**", ""] }))).toEqual(["include_paths[1]"]);
    expect(
      await badFields(c.resolveScope({ projects: ["local/api"], excludePaths: ["/etc/passwd", "a/../b", "x".repeat(1025), "[unclosed"] })),
    ).toEqual(["exclude_paths[0]", "exclude_paths[1]", "exclude_paths[2]", "exclude_paths[3]"]);
    expect(await badFields(c.resolveScope({ projects: ["local/api"], includeResources: [""] }))).toEqual(["include_resources[0]"]);
    expect(await badFields(c.resolveScope({ projects: ["local/api"], excludeResources: ["x".repeat(401)] }))).toEqual([
      "exclude_resources[0]",
    ]);
    expect(await badFields(c.resolveScope({ projects: ["local/api"], includeResources: Array(1025).fill("api") }))).toEqual([
      "include_resources",
    ]);
  });

  test("a missing project is NOT_FOUND; a project the key does not allow is PERMISSION_DENIED listing all offenders", async () => {
    await expectCode(scopeClient("reader").resolveScope({ projects: ["local/api", "local/nope"] }), Code.NotFound);
    const { err, sv } = await violation(scopeClient("reader").resolveScope({ projects: ["local/api", "other/x", "other/y"] }));
    expect(sv.projectNames).toEqual(["other/x", "other/y"]);
    expect(err.message).toContain("other/x, other/y");
  });

  test("a scope is frozen: a resource registered afterwards is outside it", async () => {
    const before = await resolve("writer", { projects: ["local/later"] });
    const late = (await t.client(RegistryService, "writer").registerResource({ project: "local/later", alias: "late", kind: "repo" }))
      .resource!;
    const { sv } = await violation(scopeClient("writer", before.scopeId).validateResourceScope({ requestedResourceIds: [late.id] }));
    expect(sv.resourceIds).toEqual([late.id]);
    const after = await resolve("writer", { projects: ["local/later"] });
    expect(after.resourceIds).toEqual([late.id]);
  });

  test("a project with no resources gives an empty, usable scope", async () => {
    const s = await resolve("reader", { projects: ["local/empty"] });
    expect(s.resourceIds).toEqual([]);
    await scopeClient("reader", s.scopeId).validateProjectScope({ requestedProjects: ["local/empty"] });
  });

  test("a scope whose every resource is denied is stored, but using it is refused", async () => {
    const s = await resolve("reader", { projects: ["local/api"], excludeResources: ["api"] });
    expect(s.resourceIds).toEqual([]);
    expect(s.deniedResourceIds).toEqual(sorted(ids.REPO, ids.SUB, ids.LEAF));
    expect((await scopeClient("reader").getScope({ scopeId: s.scopeId })).scope?.scopeId).toBe(s.scopeId);
    const { sv } = await violation(scopeClient("reader", s.scopeId).validateProjectScope({ requestedProjects: ["local/api"] }));
    expect(sv.resourceIds).toEqual(sorted(ids.REPO, ids.SUB, ids.LEAF));
    expect(sv.scopeProjectNames).toEqual(["local/api"]);
  });

  test("unknown or missing key is UNAUTHENTICATED", async () => {
    await expectCode(t.client(ScopeService, "acms_bogus").resolveScope({ projects: ["local/api"] }), Code.Unauthenticated);
    await expectCode(t.client(ScopeService).getScope({ scopeId: newUlid() }), Code.Unauthenticated);
  });
});

describe("GetScope", () => {
  test("returns the caller's own scope as stored", async () => {
    const s = await resolve("writer", { projects: ["local/web"], includePaths: ["docs/**"] });
    expect((await scopeClient("writer").getScope({ scopeId: s.scopeId })).scope).toEqual(s);
  });

  test("another principal's scope and an unknown id are NOT_FOUND with the same message", async () => {
    const s = await resolve("writer", { projects: ["local/web"] });
    const theirs = await expectCode(scopeClient("reader").getScope({ scopeId: s.scopeId }), Code.NotFound);
    const unknownId = newUlid();
    const unknown = await expectCode(scopeClient("reader").getScope({ scopeId: unknownId }), Code.NotFound);
    expect(theirs.rawMessage.replace(s.scopeId, "ID")).toBe(unknown.rawMessage.replace(unknownId, "ID"));
  });

  test("an empty scope_id is INVALID_ARGUMENT; a malformed one is NOT_FOUND like any unknown id", async () => {
    expect(await badFields(scopeClient("reader").getScope({ scopeId: "" }))).toEqual(["scope_id"]);
    await expectCode(scopeClient("reader").getScope({ scopeId: "no-such-scope" }), Code.NotFound);
    await expectCode(scopeClient("reader").getScope({ scopeId: "x".repeat(10_000) }), Code.NotFound);
  });
});

describe("NarrowScope and the validation RPCs", () => {
  let parent: ResourceScope;
  beforeAll(async () => {
    parent = await resolve("writer", {
      projects: ["local/api", "local/web"],
      excludeResources: ["docs"],
      includePaths: ["src/**"],
      excludePaths: ["**/*.lock"],
      temporalScope: "all",
    });
  });

  test("the header is required, must exist and must be the caller's", async () => {
    await expectCode(scopeClient("writer").narrowScope({}), Code.FailedPrecondition);
    await expectCode(scopeClient("writer", newUlid()).narrowScope({}), Code.NotFound);
    await expectCode(scopeClient("admin", parent.scopeId).narrowScope({}), Code.NotFound);
    await expectCode(scopeClient("reader", parent.scopeId).validateProjectScope({ requestedProjects: [] }), Code.NotFound);
    await expectCode(scopeClient("writer", "x".repeat(500)).validateResourceScope({}), Code.NotFound);
  });

  test("no change inherits everything and records the parent", async () => {
    const child = (await scopeClient("writer", parent.scopeId).narrowScope({})).scope!;
    expect(child.scopeId).not.toBe(parent.scopeId);
    expect(child.parentScopeId).toBe(parent.scopeId);
    expect(child.resourceIds).toEqual(parent.resourceIds);
    expect(child.projectNames).toEqual(parent.projectNames);
    expect(child.temporalScope).toBe("all");
    expect(child.includePaths).toEqual(["src/**"]);
    expect(child.excludePaths).toEqual(["**/*.lock"]);
    expect(child.deniedResourceIds).toEqual([ids.DOCS]);
  });

  test("a project subset keeps that project's resources; the dropped ones are recorded as denied", async () => {
    const child = (await scopeClient("writer", parent.scopeId).narrowScope({ projects: ["local/api"] })).scope!;
    expect(child.projectNames).toEqual(["local/api"]);
    expect(child.resourceIds).toEqual(sorted(ids.REPO, ids.SUB, ids.LEAF));
    expect(child.deniedResourceIds).toEqual(sorted(ids.DOCS, ids.WEB_API));
  });

  test("a project outside the parent is PERMISSION_DENIED naming every offender", async () => {
    const { err, sv } = await violation(
      scopeClient("writer", parent.scopeId).narrowScope({ projects: ["local/api", "local/empty", "other/x"] }),
    );
    expect(sv.projectNames).toEqual(["local/empty", "other/x"]);
    expect(sv.scopeProjectNames).toEqual(["local/api", "local/web"]);
    expect(err.rawMessage).toBe("Projects not in scope: local/empty, other/x. Available: local/api, local/web");
  });

  test("deny removes with descendants and accumulates; ids the parent lacks change nothing; paths add up", async () => {
    const child = (
      await scopeClient("writer", parent.scopeId).narrowScope({
        denyResourceIds: [ids.SUB, ids.HIDDEN, newUlid()],
        excludePaths: ["tmp/**", "**/*.lock"],
      })
    ).scope!;
    expect(child.resourceIds).toEqual(sorted(ids.REPO, ids.WEB_API));
    expect(child.deniedResourceIds).toEqual(sorted(ids.DOCS, ids.SUB, ids.LEAF));
    expect(child.excludePaths).toEqual(["**/*.lock", "tmp/**"]);
    const grandchild = (await scopeClient("writer", child.scopeId).narrowScope({ denyResourceIds: [ids.DOCS, ids.SUB] })).scope!;
    expect(grandchild.resourceIds).toEqual(child.resourceIds);
    expect(grandchild.parentScopeId).toBe(child.scopeId);
    const back = await scopeClient("writer").getScope({ scopeId: grandchild.scopeId });
    expect(back.scope).toEqual(grandchild);
  });

  test("a child can never widen: narrowing again from the child cannot bring back denied resources", async () => {
    const child = (await scopeClient("writer", parent.scopeId).narrowScope({ projects: ["local/web"] })).scope!;
    const again = (await scopeClient("writer", child.scopeId).narrowScope({})).scope!;
    expect(again.resourceIds).toEqual([ids.WEB_API]);
    const { sv } = await violation(scopeClient("writer", child.scopeId).narrowScope({ projects: ["local/api"] }));
    expect(sv.projectNames).toEqual(["local/api"]);
    await violation(scopeClient("writer", child.scopeId).validateResourceScope({ requestedResourceIds: [ids.REPO] }));
  });

  test("denying an id the parent does not hold changes nothing, even when it is an ancestor of held ones", async () => {
    const narrow = await resolve("writer", { projects: ["local/api"], includeResources: ["sub"] });
    const child = (await scopeClient("writer", narrow.scopeId).narrowScope({ denyResourceIds: [ids.REPO] })).scope!;
    expect(child.resourceIds).toEqual(sorted(ids.SUB, ids.LEAF));
    expect(child.deniedResourceIds).toEqual([]);
  });

  test("malformed deny ids and bad globs are INVALID_ARGUMENT naming the field", async () => {
    const c = scopeClient("writer", parent.scopeId);
    expect(await badFields(c.narrowScope({ denyResourceIds: [ids.SUB, "nope", ""] }))).toEqual([
      "deny_resource_ids[1]",
      "deny_resource_ids[2]",
    ]);
    expect(await badFields(c.narrowScope({ excludePaths: ["ok/**", "../up"] }))).toEqual(["exclude_paths[1]"]);
    expect(await badFields(c.narrowScope({ projects: ["BAD"] }))).toEqual(["projects[0]"]);
  });

  test("denying everything stores a child that is refused when used", async () => {
    const child = (await scopeClient("writer", parent.scopeId).narrowScope({ denyResourceIds: [...parent.resourceIds] })).scope!;
    expect(child.resourceIds).toEqual([]);
    await violation(scopeClient("writer", child.scopeId).validateProjectScope({ requestedProjects: ["local/api"] }));
    await violation(scopeClient("writer", child.scopeId).narrowScope({}));
  });

  test("ValidateProjectScope: empty when all are in scope; else every offender and the scope's projects", async () => {
    const c = scopeClient("writer", parent.scopeId);
    expect(await c.validateProjectScope({ requestedProjects: ["local/api", "local/web"] })).toBeDefined();
    const { err, sv } = await violation(c.validateProjectScope({ requestedProjects: ["local/frontend", "local/api", "other/x"] }));
    expect(sv.projectNames).toEqual(["local/frontend", "other/x"]);
    expect(sv.scopeProjectNames).toEqual(["local/api", "local/web"]);
    expect(err.rawMessage).toBe("Projects not in scope: local/frontend, other/x. Available: local/api, local/web");
    expect(await badFields(c.validateProjectScope({ requestedProjects: ["local/api", "nope"] }))).toEqual(["requested_projects[1]"]);
  });

  test("ValidateResourceScope: denied ids, other tenants' ids and unknown ids are refused alike, all at once", async () => {
    const c = scopeClient("writer", parent.scopeId);
    await c.validateResourceScope({ requestedResourceIds: [ids.REPO, ids.WEB_API] });
    const unknown = newUlid();
    const { sv } = await violation(c.validateResourceScope({ requestedResourceIds: [ids.REPO, ids.DOCS, ids.HIDDEN, unknown] }));
    expect(sv.resourceIds).toEqual([ids.DOCS, ids.HIDDEN, unknown]);
    expect(sv.scopeProjectNames).toEqual(["local/api", "local/web"]);
    expect(await badFields(c.validateResourceScope({ requestedResourceIds: ["uko://x"] }))).toEqual(["requested_resource_ids[0]"]);
  });

  test("the gRPC protocol carries the ScopeViolation too", async () => {
    const g = t.client(ScopeService, "writer", parent.scopeId, "grpc");
    const { sv } = await violation(g.validateProjectScope({ requestedProjects: ["local/frontend"] }));
    expect(sv.projectNames).toEqual(["local/frontend"]);
  });
});

describe("restart", () => {
  test("registry and scopes survive closing the server and starting again on the same data", async () => {
    const s = await resolve("writer", { projects: ["local/api"], excludeResources: ["leaf"] });
    const child = (await scopeClient("writer", s.scopeId).narrowScope({ denyResourceIds: [ids.SUB] })).scope!;
    const { dataDir, keyEntries, keys } = t;
    await t.close();
    t = await startTestServer({ dataDir, keyEntries, keys });
    expect((await scopeClient("writer").getScope({ scopeId: s.scopeId })).scope).toEqual(s);
    expect((await scopeClient("writer").getScope({ scopeId: child.scopeId })).scope).toEqual(child);
    await expectCode(scopeClient("reader").getScope({ scopeId: s.scopeId }), Code.NotFound);
    await scopeClient("writer", child.scopeId).validateResourceScope({ requestedResourceIds: [ids.REPO] });
    await violation(scopeClient("writer", child.scopeId).validateResourceScope({ requestedResourceIds: [ids.SUB] }));
    const listed = (await t.client(RegistryService, "reader").listResources({ project: "local/api" })).resources;
    expect(listed.map((r) => r.id).sort()).toEqual(sorted(ids.REPO, ids.SUB, ids.LEAF));
    const sub = listed.find((r) => r.id === ids.SUB)!;
    expect(sub.parentIds).toEqual([ids.REPO]);
    expect((await resolve("admin", { projects: ["local/api"], excludeResources: ["sub"] })).resourceIds).toEqual(
      sorted(ids.REPO, ids.HIDDEN),
    );
  });

  test("a key that lost a project after a restart can no longer use scopes over it", async () => {
    const apiScope = await resolve("writer", { projects: ["local/api", "local/web"] });
    const webScope = await resolve("writer", { projects: ["local/web"] });
    const { dataDir, keys } = t;
    const keyEntries = t.keyEntries.map((e) => (e.name === "writer" ? { ...e, projects: ["local/web"] } : e));
    await t.close();
    t = await startTestServer({ dataDir, keyEntries, keys });
    const { sv } = await violation(scopeClient("writer", apiScope.scopeId).validateResourceScope({ requestedResourceIds: [ids.DOCS] }));
    expect(sv.projectNames).toEqual(["local/api"]);
    await violation(scopeClient("writer", apiScope.scopeId).narrowScope({ projects: ["local/web"] }));
    await scopeClient("writer", webScope.scopeId).validateResourceScope({ requestedResourceIds: [ids.DOCS] });
  });
});
