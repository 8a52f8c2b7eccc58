import { toJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { RegistryService, ResourceSchema } from "../../gen/acms/v1/registry_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { isUlid, newUlid } from "../../src/domain/ulid-id.js";
import { badFields, expectCode } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close(true);
});

const admin = () => t.client(RegistryService, "admin");
const writer = () => t.client(RegistryService, "writer");
const reader = () => t.client(RegistryService, "reader");
const other = () => t.client(RegistryService, "other");

describe("RegistryService end to end", () => {
  beforeAll(async () => {
    await admin().createProject({ name: "local/api" });
    await admin().createProject({ name: "local/web" });
    await admin().createProject({ name: "other/secret" });
  });

  test("CreateProject returns the project with namespace and time; twice is ALREADY_EXISTS", async () => {
    const { project } = await writer().createProject({ name: "local/fresh" });
    expect(project?.name).toBe("local/fresh");
    expect(project?.namespace).toBe("local");
    expect(project?.createdAt?.seconds).toBeGreaterThan(0n);
    await expectCode(writer().createProject({ name: "local/fresh" }), Code.AlreadyExists);
  });

  test("CreateProject: bad names are INVALID_ARGUMENT naming `name`; another tenant's namespace is PERMISSION_DENIED", async () => {
    for (const name of ["", "Local/API", "local", "local/api/x", "local/-x", "a/" + "b".repeat(300)]) {
      expect(await badFields(writer().createProject({ name }))).toEqual(["name"]);
    }
    const err = await expectCode(writer().createProject({ name: "other/mine" }), Code.PermissionDenied);
    const [sv] = err.findDetails(ScopeViolationSchema);
    expect(sv.projectNames).toEqual(["other/mine"]);
    expect(sv.scopeProjectNames).toEqual(["local/*"]);
  });

  test("ListProjects shows only the projects the key allows", async () => {
    const names = (await writer().listProjects({})).projects.map((p) => p.name);
    expect(names).toContain("local/api");
    expect(names).not.toContain("other/secret");
    expect((await other().listProjects({})).projects.map((p) => p.name)).toEqual(["other/secret"]);
  });

  test("RegisterResource assigns a ULID, keeps metadata, and ListResources/ResolveAlias find it", async () => {
    const { resource } = await writer().registerResource({ project: "local/api", alias: "core", kind: "repo", metadata: { lang: "ts" } });
    expect(isUlid(resource!.id)).toBe(true);
    expect(resource!.alias).toBe("core");
    expect(resource!.ownerProject).toBe("local/api");
    expect(resource!.links.map((l) => [l.project, l.alias])).toEqual([["local/api", "core"]]);
    const listed = (await reader().listResources({ project: "local/api" })).resources.find((r) => r.id === resource!.id);
    expect(listed?.metadata).toEqual({ lang: "ts" });
    expect((await reader().resolveAlias({ project: "local/api", aliasOrId: "core" })).resourceId).toBe(resource!.id);
    expect((await reader().resolveAlias({ project: "local/api", aliasOrId: resource!.id })).resourceId).toBe(resource!.id);
  });

  test("RegisterResource with a chosen id keeps it; reuse is ALREADY_EXISTS; alias clash is ALREADY_EXISTS", async () => {
    const id = newUlid();
    const { resource } = await writer().registerResource({ project: "local/api", alias: "chosen", kind: "docs", id });
    expect(resource!.id).toBe(id);
    await expectCode(writer().registerResource({ project: "local/api", alias: "chosen2", kind: "docs", id }), Code.AlreadyExists);
    await expectCode(writer().registerResource({ project: "local/api", alias: "chosen", kind: "docs" }), Code.AlreadyExists);
  });

  test("RegisterResource with an id taken by a resource the key cannot see answers as for any unusable id, never ALREADY_EXISTS", async () => {
    const { resource: hidden } = await admin().registerResource({
      project: "other/secret",
      alias: "hidden-one",
      kind: "docs",
      id: newUlid(),
    });
    const taken = await expectCode(
      writer().registerResource({ project: "local/api", alias: "probe", kind: "docs", id: hidden!.id }),
      Code.InvalidArgument,
    );
    const malformed = await expectCode(
      writer().registerResource({ project: "local/api", alias: "probe", kind: "docs", id: "not-a-ulid" }),
      Code.InvalidArgument,
    );
    expect(await badFields(writer().registerResource({ project: "local/api", alias: "probe", kind: "docs", id: hidden!.id }))).toEqual([
      "id",
    ]);
    expect(await badFields(writer().registerResource({ project: "local/api", alias: "probe", kind: "docs", id: "not-a-ulid" }))).toEqual([
      "id",
    ]);
    expect(String(taken)).not.toMatch(/exist|secret|taken/i);
    expect(String(malformed)).not.toMatch(/exist|secret/i);
    // Nothing was written, and a fresh id still works with the same request.
    expect((await writer().listResources({ project: "local/api" })).resources.some((r) => r.alias === "probe")).toBe(false);
    const { resource } = await writer().registerResource({ project: "local/api", alias: "probe", kind: "docs", id: newUlid() });
    expect(resource!.alias).toBe("probe");
  });

  test("RegisterResource: every bad field at once, named", async () => {
    const fields = await badFields(
      writer().registerResource({
        project: "local/api",
        alias: "bad alias",
        kind: "",
        id: "nope",
        metadata: { "": "x" },
      }),
    );
    expect(fields).toEqual(["alias", "kind", "id", "metadata[]"]);
    expect(await badFields(writer().registerResource({ project: "", alias: "a", kind: "repo" }))).toEqual(["project"]);
    expect(await badFields(writer().registerResource({ project: "local/api", alias: newUlid(), kind: "repo" }))).toEqual(["alias"]);
    expect(await badFields(writer().registerResource({ project: "local/api", alias: "", kind: "repo" }))).toEqual(["alias"]);
    expect(await badFields(writer().registerResource({ project: "local/api", alias: "k", kind: "x".repeat(65) }))).toEqual(["kind"]);
    expect(await badFields(writer().registerResource({ project: "local/api", alias: "p", kind: "repo", parentIds: ["zzz"] }))).toEqual([
      "parent_ids[0]",
    ]);
    const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"]));
    expect(await badFields(writer().registerResource({ project: "local/api", alias: "m", kind: "repo", metadata: tooMany }))).toEqual([
      "metadata",
    ]);
    expect(
      await badFields(writer().registerResource({ project: "local/api", alias: "m", kind: "repo", metadata: { k: "v".repeat(4097) } })),
    ).toEqual(["metadata[k]"]);
  });

  test("RegisterResource into a missing project is NOT_FOUND; a parent nobody can see is PERMISSION_DENIED", async () => {
    await expectCode(writer().registerResource({ project: "local/none", alias: "a", kind: "repo" }), Code.NotFound);
    const planted = await expectCode(
      writer().registerResource({ project: "other/secret", alias: "planted", kind: "repo" }),
      Code.PermissionDenied,
    );
    expect(planted.findDetails(ScopeViolationSchema)[0].projectNames).toEqual(["other/secret"]);
    expect((await other().listResources({ project: "other/secret" })).resources.map((r) => r.alias)).not.toContain("planted");
    const err = await expectCode(
      writer().registerResource({ project: "local/api", alias: "orphan", kind: "repo", parentIds: [newUlid()] }),
      Code.PermissionDenied,
    );
    expect(err.findDetails(ScopeViolationSchema)[0].resourceIds).toHaveLength(1);
  });

  test("parents: the DAG is stored, and a parent of another tenant cannot be named", async () => {
    const p = (await writer().registerResource({ project: "local/api", alias: "parent", kind: "repo" })).resource!;
    const c = (await writer().registerResource({ project: "local/api", alias: "child", kind: "repo", parentIds: [p.id] })).resource!;
    expect(c.parentIds).toEqual([p.id]);
    const secret = (await other().registerResource({ project: "other/secret", alias: "s", kind: "repo" })).resource!;
    const err = await expectCode(
      writer().registerResource({ project: "local/api", alias: "sneaky", kind: "repo", parentIds: [p.id, secret.id] }),
      Code.PermissionDenied,
    );
    expect(err.findDetails(ScopeViolationSchema)[0].resourceIds).toEqual([secret.id]);
  });

  test("LinkResource: links into another project; twice, alias clash, missing project, foreign resource", async () => {
    const r = (await writer().registerResource({ project: "local/api", alias: "shared", kind: "repo" })).resource!;
    const { link } = await writer().linkResource({ project: "local/web", resourceId: r.id, alias: "api-shared" });
    expect(link).toMatchObject({ project: "local/web", resourceId: r.id, alias: "api-shared" });
    expect((await reader().resolveAlias({ project: "local/web", aliasOrId: "api-shared" })).resourceId).toBe(r.id);
    await expectCode(writer().linkResource({ project: "local/web", resourceId: r.id, alias: "again" }), Code.AlreadyExists);
    const r2 = (await writer().registerResource({ project: "local/api", alias: "shared2", kind: "repo" })).resource!;
    await expectCode(writer().linkResource({ project: "local/web", resourceId: r2.id, alias: "api-shared" }), Code.AlreadyExists);
    await expectCode(writer().linkResource({ project: "local/none", resourceId: r2.id, alias: "x" }), Code.NotFound);
    expect(await badFields(writer().linkResource({ project: "local/web", resourceId: r2.id, alias: "no/slash" }))).toEqual(["alias"]);
    expect(await badFields(writer().linkResource({ project: "local/web", resourceId: "bad", alias: "x" }))).toEqual(["resource_id"]);
    expect(await badFields(writer().linkResource({ project: "", resourceId: r2.id, alias: "x" }))).toEqual(["project"]);
    const secret = (await other().registerResource({ project: "other/secret", alias: "s2", kind: "repo" })).resource!;
    await expectCode(writer().linkResource({ project: "local/web", resourceId: secret.id, alias: "stolen" }), Code.PermissionDenied);
    await expectCode(writer().linkResource({ project: "other/secret", resourceId: r2.id, alias: "planted" }), Code.PermissionDenied);
  });

  test("a resource linked into another tenant's project shows only the links the caller's key allows", async () => {
    const r = (await admin().registerResource({ project: "local/api", alias: "cross", kind: "repo" })).resource!;
    await admin().linkResource({ project: "other/secret", resourceId: r.id, alias: "cross" });
    const listed = (await reader().listResources({ project: "local/api" })).resources.find((x) => x.id === r.id)!;
    expect(listed.links.map((l) => l.project)).toEqual(["local/api"]);
    const parent = (await other().registerResource({ project: "other/secret", alias: "hidden-parent", kind: "repo" })).resource!;
    const child = (
      await admin().registerResource({ project: "local/api", alias: "has-hidden-parent", kind: "repo", parentIds: [parent.id] })
    ).resource!;
    const seen = (await reader().listResources({ project: "local/api" })).resources.find((x) => x.id === child.id)!;
    expect(seen.parentIds).toEqual([]);
    const foreignOwned = (await admin().registerResource({ project: "other/secret", alias: "lent", kind: "repo" })).resource!;
    await admin().linkResource({ project: "local/api", resourceId: foreignOwned.id, alias: "borrowed" });
    const borrowed = (await reader().listResources({ project: "local/api" })).resources.find((x) => x.id === foreignOwned.id)!;
    expect(borrowed.ownerProject).toBe("");
    expect(borrowed.links.map((l) => l.project)).toEqual(["local/api"]);
    expect(JSON.stringify(toJson(ResourceSchema, borrowed))).not.toContain("other/secret");
    const asAdmin = (await admin().listResources({ project: "local/api" })).resources.find((x) => x.id === foreignOwned.id)!;
    expect(asAdmin.ownerProject).toBe("other/secret");
  });

  test("ListResources, ResolveAlias, ValidateAliases: project must exist and be allowed", async () => {
    await expectCode(reader().listResources({ project: "local/none" }), Code.NotFound);
    await expectCode(reader().resolveAlias({ project: "local/none", aliasOrId: "x" }), Code.NotFound);
    await expectCode(reader().validateAliases({ project: "local/none" }), Code.NotFound);
    const err = await expectCode(reader().listResources({ project: "other/secret" }), Code.PermissionDenied);
    expect(err.message).toContain("Projects not in");
    expect(err.findDetails(ScopeViolationSchema)[0].projectNames).toEqual(["other/secret"]);
    await expectCode(reader().resolveAlias({ project: "other/secret", aliasOrId: "s" }), Code.PermissionDenied);
    await expectCode(reader().validateAliases({ project: "other/secret" }), Code.PermissionDenied);
    expect(await badFields(reader().listResources({ project: "" }))).toEqual(["project"]);
    expect(await badFields(reader().validateAliases({ project: "" }))).toEqual(["project"]);
    expect(await badFields(reader().listResources({ project: "BAD" }))).toEqual(["project"]);
  });

  test("ResolveAlias: unknown alias or an id not linked into the project is NOT_FOUND; empty is INVALID_ARGUMENT", async () => {
    const r = (await writer().registerResource({ project: "local/web", alias: "web-only", kind: "repo" })).resource!;
    await expectCode(reader().resolveAlias({ project: "local/api", aliasOrId: "web-only" }), Code.NotFound);
    await expectCode(reader().resolveAlias({ project: "local/api", aliasOrId: r.id }), Code.NotFound);
    await expectCode(reader().resolveAlias({ project: "local/api", aliasOrId: "nope" }), Code.NotFound);
    expect(await badFields(reader().resolveAlias({ project: "local/api", aliasOrId: "" }))).toEqual(["alias_or_id"]);
    expect(await badFields(reader().resolveAlias({ project: "local/api", aliasOrId: "x".repeat(129) }))).toEqual(["alias_or_id"]);
    expect(await badFields(reader().resolveAlias({ project: "", aliasOrId: "" }))).toEqual(["project", "alias_or_id"]);
  });

  test("ValidateAliases: clean is empty; aliases equal ignoring case are reported, one message each", async () => {
    await admin().createProject({ name: "local/aliases" });
    expect((await reader().validateAliases({ project: "local/aliases" })).errors).toEqual([]);
    await writer().registerResource({ project: "local/aliases", alias: "Readme", kind: "docs" });
    await writer().registerResource({ project: "local/aliases", alias: "readme", kind: "docs" });
    await writer().registerResource({ project: "local/aliases", alias: "Guide", kind: "docs" });
    await writer().registerResource({ project: "local/aliases", alias: "GUIDE", kind: "docs" });
    await writer().registerResource({ project: "local/aliases", alias: "solo", kind: "docs" });
    const { errors } = await reader().validateAliases({ project: "local/aliases" });
    expect(errors).toHaveLength(2);
    expect(errors.some((e) => e.includes('"Readme"') && e.includes('"readme"'))).toBe(true);
  });

  test("a read-only key cannot write; an unknown or missing key is UNAUTHENTICATED", async () => {
    await expectCode(reader().createProject({ name: "local/ro" }), Code.PermissionDenied);
    await expectCode(reader().registerResource({ project: "local/api", alias: "ro", kind: "repo" }), Code.PermissionDenied);
    await expectCode(reader().linkResource({ project: "local/web", resourceId: newUlid(), alias: "ro" }), Code.PermissionDenied);
    await expectCode(t.client(RegistryService, "acms_not-a-real-key").listProjects({}), Code.Unauthenticated);
    await expectCode(t.client(RegistryService).listProjects({}), Code.Unauthenticated);
  });

  test("the gRPC protocol gets the same codes and details", async () => {
    const grpc = t.client(RegistryService, "writer", undefined, "grpc");
    const err = await expectCode(grpc.registerResource({ project: "local/api", alias: "", kind: "" }), Code.InvalidArgument);
    expect(err.findDetails(BadRequestSchema)[0].fieldViolations.map((v) => v.field)).toEqual(["alias", "kind"]);
    await expectCode(grpc.listResources({ project: "other/secret" }), Code.PermissionDenied);
  });
});
