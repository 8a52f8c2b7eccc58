import { Code, ConnectError } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { seedTenants, Transports, WIRES, type Seeded, type Wire } from "./interop-fixture.js";

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

describe.each(WIRES)("Connect client over $protocol on HTTP/$httpVersion", (wire: Wire) => {
  let t: TestServer;
  let tx: Transports;
  let seeded: Seeded;
  beforeAll(async () => {
    t = await startTestServer();
    tx = new Transports(t.server.url);
    seeded = await seedTenants(t);
  });
  afterAll(async () => {
    tx.close();
    await t.close(true);
  });

  it("registers, resolves and narrows a scope", async () => {
    const registry = tx.client(RegistryService, wire, t.keys.writer);
    await registry.createProject({ name: "local/wire" });
    const r = (await registry.registerResource({ project: "local/wire", alias: "doc", kind: "docs" })).resource!;
    expect((await registry.resolveAlias({ project: "local/wire", aliasOrId: "doc" })).resourceId).toBe(r.id);
    const scopes = tx.client(ScopeService, wire, t.keys.writer);
    const scope = (await scopes.resolveScope({ projects: ["local/api", "local/wire"] })).scope!;
    expect([...scope.resourceIds].sort()).toEqual([seeded.a, seeded.b, r.id].sort());
    const narrowed = (await tx.client(ScopeService, wire, t.keys.writer, scope.scopeId).narrowScope({ denyResourceIds: [seeded.a] }))
      .scope!;
    expect(narrowed.resourceIds).toEqual([r.id]);
    expect(narrowed.parentScopeId).toBe(scope.scopeId);
    await tx.client(ScopeService, wire, t.keys.writer, narrowed.scopeId).validateResourceScope({ requestedResourceIds: [r.id] });
  });

  it("decodes a ScopeViolation naming every out-of-scope id", async () => {
    const scoped = tx.client(ScopeService, wire, t.keys.writer, seeded.scopeId);
    await scoped.validateResourceScope({ requestedResourceIds: [seeded.a, seeded.b] });
    const err = await failure(scoped.validateResourceScope({ requestedResourceIds: [seeded.a, seeded.c, seeded.ghost] }));
    expect(err.code).toBe(Code.PermissionDenied);
    const [v] = err.findDetails(ScopeViolationSchema);
    expect(v.resourceIds).toEqual([seeded.c, seeded.ghost]);
    expect(v.scopeProjectNames).toEqual(["local/api"]);
    expect(v.reason).toContain(seeded.c);

    const projectErr = await failure(scoped.validateProjectScope({ requestedProjects: ["local/api", "other/x", "local/nope"] }));
    expect(projectErr.code).toBe(Code.PermissionDenied);
    expect(projectErr.findDetails(ScopeViolationSchema)[0].projectNames).toEqual(["other/x", "local/nope"]);
  });

  it("decodes BadRequest field violations", async () => {
    const registry = tx.client(RegistryService, wire, t.keys.writer);
    const err = await failure(registry.createProject({ name: "Not A Project" }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(BadRequestSchema)[0].fieldViolations.map((f) => f.field)).toEqual(["name"]);
    const scopeErr = await failure(
      tx.client(ScopeService, wire, t.keys.writer).resolveScope({ projects: ["local/api"], includePaths: ["/abs"], temporalScope: "soon" }),
    );
    expect(scopeErr.code).toBe(Code.InvalidArgument);
    expect(
      scopeErr
        .findDetails(BadRequestSchema)[0]
        .fieldViolations.map((f) => f.field)
        .sort(),
    ).toEqual(expect.arrayContaining([expect.stringMatching(/^include_paths/), "temporal_scope"]));
  });

  it("answers authentication and scope-header mistakes with their codes", async () => {
    expect((await failure(tx.client(RegistryService, wire).listProjects({}))).code).toBe(Code.Unauthenticated);
    expect((await failure(tx.client(RegistryService, wire, "acms_wrong").listProjects({}))).code).toBe(Code.Unauthenticated);
    expect(
      (await failure(tx.client(ScopeService, wire, t.keys.writer).validateResourceScope({ requestedResourceIds: [seeded.a] }))).code,
    ).toBe(Code.FailedPrecondition);
    // Another principal's scope does not exist for this one.
    expect((await failure(tx.client(ScopeService, wire, t.keys.reader, seeded.scopeId).validateResourceScope({}))).code).toBe(
      Code.NotFound,
    );
    expect((await failure(tx.client(RegistryService, wire, t.keys.reader).createProject({ name: "local/ro" }))).code).toBe(
      Code.PermissionDenied,
    );
    expect((await failure(tx.client(RegistryService, wire, t.keys.writer).createProject({ name: "other/y" }))).code).toBe(
      Code.PermissionDenied,
    );
  });

  it("keeps serving after refused calls", async () => {
    expect((await tx.client(Health, wire).check({})).status).toBe(ServingStatus.SERVING);
    const names = (await tx.client(RegistryService, wire, t.keys.writer).listProjects({})).projects.map((p) => p.name);
    expect(names).toContain("local/api");
    expect(names).not.toContain("other/x");
  });
});

describe("request size limit", () => {
  let t: TestServer;
  let tx: Transports;
  beforeAll(async () => {
    t = await startTestServer({ env: { ACMS_MAX_MESSAGE_BYTES: "4096" } });
    tx = new Transports(t.server.url);
  });
  afterAll(async () => {
    tx.close();
    await t.close(true);
  });

  it.each(WIRES)("refuses an oversize message over $protocol on HTTP/$httpVersion and keeps serving", async (wire) => {
    const registry = tx.client(RegistryService, wire, t.keys.admin);
    const big = await failure(registry.createProject({ name: `local/${"a".repeat(8000)}` }));
    expect(big.code).toBe(Code.ResourceExhausted);
    const name = `local/small-${wire.protocol}-${wire.httpVersion.replace(".", "")}`;
    expect((await registry.createProject({ name })).project?.name).toBe(name);
  });
});
