import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection, ServerReflectionRequestSchema } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { GrpcJsGenericClient as Client, grpcFailure } from "./grpc-js-generic-client.js";
import { seedTenants, type Seeded } from "./interop-fixture.js";

const md = Client.metadata;

describe("grpc-js client", () => {
  let t: TestServer;
  let c: Client;
  let seeded: Seeded;
  beforeAll(async () => {
    t = await startTestServer({ env: { ACMS_MAX_MESSAGE_BYTES: "65536" } });
    seeded = await seedTenants(t);
    c = new Client(`127.0.0.1:${t.server.port}`);
  });
  afterAll(async () => {
    c.close();
    await t.close(true);
  });

  it("registers, resolves, narrows and validates", async () => {
    await c.unary(RegistryService.method.createProject, { name: "local/grpcjs" }, md(t.keys.writer));
    const r = (
      await c.unary(RegistryService.method.registerResource, { project: "local/grpcjs", alias: "site", kind: "docs" }, md(t.keys.writer))
    ).resource!;
    expect(
      (await c.unary(RegistryService.method.resolveAlias, { project: "local/grpcjs", aliasOrId: "site" }, md(t.keys.writer))).resourceId,
    ).toBe(r.id);
    const scope = (
      await c.unary(
        ScopeService.method.resolveScope,
        { projects: ["local/api", "local/grpcjs"], excludeResources: ["a"] },
        md(t.keys.writer),
      )
    ).scope!;
    // Deny acts on a with its descendant b.
    expect(scope.resourceIds).toEqual([r.id]);
    const child = (await c.unary(ScopeService.method.narrowScope, { projects: ["local/grpcjs"] }, md(t.keys.writer, scope.scopeId))).scope!;
    expect(child.projectNames).toEqual(["local/grpcjs"]);
    await c.unary(ScopeService.method.validateResourceScope, { requestedResourceIds: [r.id] }, md(t.keys.writer, child.scopeId));
  });

  it("decodes ScopeViolation from grpc-status-details-bin, naming every out-of-scope id", async () => {
    const e = await grpcFailure(
      c.unary(
        ScopeService.method.validateResourceScope,
        { requestedResourceIds: [seeded.c, seeded.a, seeded.ghost] },
        md(t.keys.writer, seeded.scopeId),
      ),
    );
    expect(e.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(e.status?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(e.scopeViolation?.resourceIds).toEqual([seeded.c, seeded.ghost]);
    expect(e.scopeViolation?.scopeProjectNames).toEqual(["local/api"]);
    // The Status message is intact (grpc-js percent-decodes grpc-message itself).
    expect(e.status?.message).toContain(`Resources not in scope: ${seeded.c}, ${seeded.ghost}`);

    const p = await grpcFailure(
      c.unary(ScopeService.method.narrowScope, { projects: ["local/api", "other/x"] }, md(t.keys.writer, seeded.scopeId)),
    );
    expect(p.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(p.scopeViolation?.projectNames).toEqual(["other/x"]);
  });

  it("decodes BadRequest field violations for bad input", async () => {
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => c.unary(RegistryService.method.createProject, { name: "no-slash" }, md(t.keys.admin)), "name"],
      [() => c.unary(RegistryService.method.resolveAlias, { project: "local/api", aliasOrId: "" }, md(t.keys.admin)), "alias_or_id"],
      [() => c.unary(ScopeService.method.resolveScope, { projects: [] }, md(t.keys.admin)), "projects"],
      [
        () => c.unary(ScopeService.method.resolveScope, { projects: ["local/api"], excludePaths: ["../up"] }, md(t.keys.admin)),
        "exclude_paths",
      ],
      [() => c.unary(ScopeService.method.getScope, { scopeId: "" }, md(t.keys.writer)), "scope_id"],
      [
        () => c.unary(ScopeService.method.narrowScope, { denyResourceIds: ["not-a-ulid"] }, md(t.keys.writer, seeded.scopeId)),
        "deny_resource_ids",
      ],
      [
        () => c.unary(ScopeService.method.validateResourceScope, { requestedResourceIds: ["zzz"] }, md(t.keys.writer, seeded.scopeId)),
        "requested_resource_ids",
      ],
    ];
    for (const [call, field] of cases) {
      const e = await grpcFailure(call());
      expect({ field, code: e.code }).toEqual({ field, code: grpc.status.INVALID_ARGUMENT });
      expect(e.badRequest?.fieldViolations.some((v) => v.field.startsWith(field))).toBe(true);
    }
  });

  it("answers every precondition with its code", async () => {
    expect((await grpcFailure(c.unary(RegistryService.method.listProjects, {}))).code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await grpcFailure(c.unary(ScopeService.method.validateProjectScope, {}, md(t.keys.writer)))).code).toBe(
      grpc.status.FAILED_PRECONDITION,
    );
    expect((await grpcFailure(c.unary(ScopeService.method.getScope, { scopeId: seeded.scopeId }, md(t.keys.other)))).code).toBe(
      grpc.status.NOT_FOUND,
    );
    expect(
      (await grpcFailure(c.unary(RegistryService.method.resolveAlias, { project: "local/api", aliasOrId: "zz" }, md(t.keys.writer)))).code,
    ).toBe(grpc.status.NOT_FOUND);
    expect((await grpcFailure(c.unary(RegistryService.method.createProject, { name: "local/ro" }, md(t.keys.reader)))).code).toBe(
      grpc.status.PERMISSION_DENIED,
    );
    const big = await grpcFailure(c.unary(RegistryService.method.createProject, { name: `local/${"x".repeat(70000)}` }, md(t.keys.admin)));
    expect(big.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect((await c.unary(Health.method.check, {})).status).toBe(ServingStatus.SERVING);
  });

  it("indexes with a client stream and searches with a server stream, inside the scope only", async () => {
    const upserted = await c.clientStream(
      IndexService.method.upsertDocuments,
      [
        { resourceId: seeded.a, documents: [{ path: "src/parser.ts", content: "the tokenizer feeds the parser" }] },
        { resourceId: seeded.b, documents: [{ path: "docs/parser.md", content: "how the parser recovers from errors" }] },
      ],
      md(t.keys.writer),
    );
    expect(upserted).toMatchObject({ documentsUpserted: 2, messagesReceived: 2 });
    await c.clientStream(
      IndexService.method.upsertDocuments,
      [{ resourceId: seeded.c, documents: [{ path: "parser.md", content: "another tenant's parser" }] }],
      md(t.keys.admin),
    );
    const refused = await grpcFailure(
      c.clientStream(
        IndexService.method.upsertDocuments,
        [{ resourceId: seeded.c, documents: [{ path: "x.md", content: "x" }] }],
        md(t.keys.writer),
      ),
    );
    expect(refused.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(refused.scopeViolation?.resourceIds).toEqual([seeded.c]);

    const stream = c.serverStream(TextBackendService.method.searchStream, { query: "parser" }, md(t.keys.writer, seeded.scopeId));
    const paths: string[] = [];
    for await (const m of stream) paths.push(m.result!.path);
    expect(paths.sort()).toEqual(["docs/parser.md", "src/parser.ts"]);
    const bad = await grpcFailure(
      (async () => {
        for await (const m of c.serverStream(
          TextBackendService.method.searchStream,
          { query: "parser", maxResults: 0 },
          md(t.keys.writer, seeded.scopeId),
        )) {
          void m;
        }
      })(),
    );
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(bad.badRequest?.fieldViolations.map((v) => v.field)).toEqual(["max_results"]);
  });

  it("streams: health watch (server stream) and reflection (bidi)", async () => {
    const watch = c.serverStream(Health.method.watch, { service: "acms.v1.RegistryService" });
    const first = await new Promise((resolve, reject) => {
      watch.once("data", resolve);
      watch.once("error", reject);
    });
    expect(first).toMatchObject({ status: ServingStatus.SERVING });
    watch.on("error", () => undefined);
    watch.cancel();

    const reflection = c.bidiStream(ServerReflection.method.serverReflectionInfo, md(t.keys.reader));
    const answers: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      reflection.on("data", (r) => answers.push(r.messageResponse.case ?? "none"));
      reflection.on("end", resolve);
      reflection.on("error", reject);
    });
    reflection.write(create(ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } }));
    reflection.write(
      create(ServerReflectionRequestSchema, { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.ScopeViolation" } }),
    );
    reflection.end();
    await done;
    expect(answers).toEqual(["listServicesResponse", "fileDescriptorResponse"]);
  });
});
