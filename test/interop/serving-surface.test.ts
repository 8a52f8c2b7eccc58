import { rmSync } from "node:fs";
import { create, createFileRegistry, fromBinary, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { access, ref } from "../../gen/acms/v1/options_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  ServerReflectionRequestSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { authInterceptor, startTestServer, type TestServer } from "../support/test-server.js";

const ACMS_SERVICES = [
  "acms.v1.ContextTierService",
  "acms.v1.GraphBackendService",
  "acms.v1.IndexService",
  "acms.v1.RagService",
  "acms.v1.RegistryService",
  "acms.v1.ScopeService",
  "acms.v1.TextBackendService",
  "acms.v1.VectorBackendService",
];

type RequestInit = Parameters<typeof create<typeof ServerReflectionRequestSchema>>[1];

/** Sends `requests` on one reflection stream (one at a time, each after the previous answer). */
async function reflect(t: TestServer, requests: RequestInit[], principal: string | undefined): Promise<ServerReflectionResponse[]> {
  const client = t.client(ServerReflection, principal, undefined, "grpc");
  async function* input(): AsyncIterable<ServerReflectionRequest> {
    for (const r of requests) yield create(ServerReflectionRequestSchema, r);
  }
  const out: ServerReflectionResponse[] = [];
  for await (const res of client.serverReflectionInfo(input())) out.push(res);
  return out;
}

function filesOf(res: ServerReflectionResponse): FileDescriptorProto[] {
  if (res.messageResponse.case !== "fileDescriptorResponse") {
    throw new Error(`expected files, got ${res.messageResponse.case}: ${JSON.stringify(res.messageResponse.value)}`);
  }
  return res.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b));
}

describe("server reflection", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close(true);
  });

  it("lists every served service, the acms ones, health and both reflection versions", async () => {
    const [res] = await reflect(t, [{ messageRequest: { case: "listServices", value: "" } }], "admin");
    expect(res.messageResponse.case).toBe("listServicesResponse");
    const names = res.messageResponse.case === "listServicesResponse" ? res.messageResponse.value.service.map((s) => s.name) : [];
    expect(names).toEqual([
      ...ACMS_SERVICES,
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ]);
  });

  it("answers a symbol with its file and every transitive dependency, once per stream", async () => {
    const [first, second] = await reflect(
      t,
      [
        { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.ScopeService" } },
        { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.RegistryService.CreateProject" } },
      ],
      "admin",
    );
    const files = filesOf(first).map((f) => f.name);
    expect(files[0]).toBe("acms/v1/scope.proto");
    expect(files).toEqual(
      expect.arrayContaining(["acms/v1/options.proto", "google/protobuf/timestamp.proto", "google/protobuf/descriptor.proto"]),
    );
    // registry.proto needs options, timestamp and descriptor too: already sent on this stream.
    expect(filesOf(second).map((f) => f.name)).toEqual(["acms/v1/registry.proto"]);
  });

  it("finds methods, fields, nested enums and enum values, and files by name", async () => {
    const res = await reflect(
      t,
      [
        { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.ScopeService.NarrowScope" } },
        { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.ScopeViolation.resource_ids" } },
        { messageRequest: { case: "fileContainingSymbol", value: "grpc.health.v1.HealthCheckResponse.ServingStatus" } },
        { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.RefKind.REF_KIND_PROJECT" } },
        { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.REF_KIND_PROJECT" } },
        { messageRequest: { case: "fileContainingSymbol", value: "grpc.health.v1.HealthCheckResponse.SERVING" } },
        { messageRequest: { case: "fileByFilename", value: "acms/v1/errors.proto" } },
      ],
      "admin",
    );
    expect(res.map((r) => filesOf(r)[0].name)).toEqual([
      "acms/v1/scope.proto",
      "acms/v1/errors.proto",
      "grpc/health/v1/health.proto",
      "acms/v1/options.proto",
      "acms/v1/options.proto",
      "grpc/health/v1/health.proto",
      "acms/v1/errors.proto",
    ]);
  });

  it("answers extensions: by number and all numbers of a type", async () => {
    const [byNumber, fieldOpts, methodOpts] = await reflect(
      t,
      [
        {
          messageRequest: {
            case: "fileContainingExtension",
            value: { containingType: "google.protobuf.FieldOptions", extensionNumber: ref.number },
          },
        },
        { messageRequest: { case: "allExtensionNumbersOfType", value: "google.protobuf.FieldOptions" } },
        { messageRequest: { case: "allExtensionNumbersOfType", value: "google.protobuf.MethodOptions" } },
      ],
      "admin",
    );
    expect(filesOf(byNumber)[0].name).toBe("acms/v1/options.proto");
    expect(fieldOpts.messageResponse).toMatchObject({
      case: "allExtensionNumbersResponse",
      value: { baseTypeName: "google.protobuf.FieldOptions", extensionNumber: [ref.number] },
    });
    expect(methodOpts.messageResponse).toMatchObject({ case: "allExtensionNumbersResponse", value: { extensionNumber: [access.number] } });
  });

  it("answers unknown names and empty requests in-band and keeps the stream open", async () => {
    const res = await reflect(
      t,
      [
        { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.NoSuchThing" } },
        { messageRequest: { case: "fileContainingSymbol", value: "acms.v1.NO_SUCH_VALUE" } },
        { messageRequest: { case: "fileByFilename", value: "acms/v1/nope.proto" } },
        {
          messageRequest: {
            case: "fileContainingExtension",
            value: { containingType: "google.protobuf.FieldOptions", extensionNumber: 1 },
          },
        },
        { messageRequest: { case: "allExtensionNumbersOfType", value: "acms.v1.Nope" } },
        { host: "h" },
        { messageRequest: { case: "listServices", value: "" } },
      ],
      "admin",
    );
    expect(
      res.map((r) => (r.messageResponse.case === "errorResponse" ? r.messageResponse.value.errorCode : r.messageResponse.case)),
    ).toEqual([Code.NotFound, Code.NotFound, Code.NotFound, Code.NotFound, Code.NotFound, Code.InvalidArgument, "listServicesResponse"]);
    expect(res[5].validHost).toBe("h");
    expect(res[0].originalRequest?.messageRequest).toEqual({ case: "fileContainingSymbol", value: "acms.v1.NoSuchThing" });
  });

  it("serves descriptors complete enough to call the API with no schema at hand", async () => {
    const [res] = await reflect(t, [{ messageRequest: { case: "fileContainingSymbol", value: "acms.v1.RegistryService" } }], "admin");
    // The requested file comes first, then its dependencies each after their own: a set wants dependencies first.
    const [requested, ...deps] = filesOf(res);
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: [...deps, requested] }));
    const service = registry.getService("acms.v1.RegistryService") as DescService;
    expect(service.methods.map((m) => m.name)).toEqual(RegistryService.methods.map((m) => m.name));
    const sessionManager = new Http2SessionManager(t.server.url);
    try {
      const transport = createGrpcTransport({ baseUrl: t.server.url, sessionManager, interceptors: [authInterceptor(t.keys.admin)] });
      const dynamic = createClient(service, transport) as unknown as Record<
        string,
        (req: object) => Promise<{ project?: { name: string } }>
      >;
      const created = await dynamic.createProject({ name: "local/reflected" });
      expect(created.project?.name).toBe("local/reflected");
    } finally {
      sessionManager.abort();
    }
  });

  it("speaks v1alpha too", async () => {
    const client = t.client(ServerReflectionV1alpha, "admin", undefined, "grpc");
    async function* input() {
      yield { messageRequest: { case: "fileContainingSymbol" as const, value: "acms.v1.ScopeService" } };
    }
    const out = [];
    for await (const r of client.serverReflectionInfo(input())) out.push(r);
    expect(out).toHaveLength(1);
    expect(out[0].messageResponse.case).toBe("fileDescriptorResponse");
  });

  it("requires an API key", async () => {
    await expect(reflect(t, [{ messageRequest: { case: "listServices", value: "" } }], undefined)).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
    await expect(reflect(t, [{ messageRequest: { case: "listServices", value: "" } }], "acms_not-a-key")).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
  });
});

describe("health", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close(true);
  });

  it("answers without a key: the server and every acms service are SERVING", async () => {
    const health = t.client(Health);
    for (const service of ["", ...ACMS_SERVICES]) {
      expect((await health.check({ service })).status).toBe(ServingStatus.SERVING);
    }
    const grpcHealth = t.client(Health, undefined, undefined, "grpc");
    expect((await grpcHealth.check({ service: "acms.v1.ScopeService" })).status).toBe(ServingStatus.SERVING);
  });

  it("is NOT_FOUND for an unknown service", async () => {
    const err = await t
      .client(Health)
      .check({ service: "acms.v1.NoSuchService" })
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.NotFound);
  });

  it("lists every service", async () => {
    const { statuses } = await t.client(Health).list({});
    expect(Object.keys(statuses)).toEqual(expect.arrayContaining(["", ...ACMS_SERVICES]));
    expect(Object.values(statuses).every((s) => s.status === ServingStatus.SERVING)).toBe(true);
  });

  it("watch reports SERVICE_UNKNOWN for an unknown name without ending the stream", async () => {
    const abort = new AbortController();
    const seen: HealthCheckResponse[] = [];
    const stream = t.client(Health).watch({ service: "nope.v1.Nope" }, { signal: abort.signal });
    const reading = (async () => {
      for await (const r of stream) {
        seen.push(r);
        abort.abort();
      }
    })();
    // The stream ends only because the client aborted it (an abort error), never with OK from the server.
    await expect(reading).rejects.toThrow(/abort|cancel/i);
    expect(seen.map((r) => r.status)).toEqual([ServingStatus.SERVICE_UNKNOWN]);
  });
});

describe("health during shutdown", () => {
  it("watch turns NOT_SERVING when a graceful shutdown starts, then ends", async () => {
    const t = await startTestServer();
    const sessionManager = new Http2SessionManager(t.server.url);
    try {
      const health = createClient(Health, createGrpcTransport({ baseUrl: t.server.url, sessionManager }));
      const seen: ServingStatus[] = [];
      let closing: Promise<void> | undefined;
      for await (const r of health.watch({ service: "acms.v1.ScopeService" })) {
        seen.push(r.status);
        closing ??= t.server.close(5000);
      }
      expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
      await closing;
    } finally {
      sessionManager.abort();
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});
