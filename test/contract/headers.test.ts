import { getOption, type DescService } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { GraphBackendService } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { access, Access } from "../../gen/acms/v1/options_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ContextTierService } from "../../gen/acms/v1/tiers_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import type { TestServer } from "../support/test-server.js";
import { callMethod, expectCode, failure, PROTOCOLS, seedWorld, startContractServer, type ContractWorld } from "./contract-fixture.js";

/** Every acms service of the contract. */
const ACMS: DescService[] = [
  RegistryService,
  IndexService,
  ScopeService,
  TextBackendService,
  VectorBackendService,
  GraphBackendService,
  RagService,
  ContextTierService,
];

/** The RPCs API.md says need `acms-scope`: every search, graph, RAG and tier RPC, and the scope validation RPCs (NarrowScope too). */
const HEADER_SCOPED = new Set<string>([
  ...[TextBackendService, VectorBackendService, GraphBackendService, RagService, ContextTierService].flatMap((s) =>
    s.methods.map((m) => `${s.typeName}.${m.name}`),
  ),
  "acms.v1.ScopeService.NarrowScope",
  "acms.v1.ScopeService.ValidateProjectScope",
  "acms.v1.ScopeService.ValidateResourceScope",
]);

const allMethods = ACMS.flatMap((s) => s.methods.map((m) => ({ service: s, method: m, id: `${s.typeName}.${m.name}` })));
const scopedMethods = allMethods.filter((m) => HEADER_SCOPED.has(m.id));
const unscopedMethods = allMethods.filter((m) => !HEADER_SCOPED.has(m.id));

/** The NOT_FOUND message with the scope id blanked, so two answers can be compared. */
const blankId = (message: string, id: string) => message.split(id).join("<id>");

describe("Headers", () => {
  let t: TestServer;
  let w: ContractWorld;
  beforeAll(async () => {
    t = await startContractServer();
    w = await seedWorld(t);
  });
  afterAll(async () => {
    await t.close(true);
  });

  test("the proto marks exactly the RPCs API.md lists as scoped (search, graph, RAG, tier, NarrowScope, Validate*)", () => {
    const marked = allMethods
      .filter((m) => getOption(m.method, access) === Access.SCOPED)
      .map((m) => m.id)
      .sort();
    expect(marked).toEqual([...HEADER_SCOPED].sort());
  });

  describe.each(PROTOCOLS)("authorization: Bearer <api-key> (%s)", (protocol) => {
    test("missing authorization is UNAUTHENTICATED on every RPC of every acms service", async () => {
      const wrong: string[] = [];
      for (const { service, method, id } of allMethods) {
        const err = await failure(callMethod(t.client(service, undefined, w.apiScope, protocol), method));
        if (err.code !== Code.Unauthenticated) wrong.push(`${id}: ${Code[err.code]} ${err.rawMessage}`);
      }
      expect(wrong).toEqual([]);
    });

    test("an unknown key is UNAUTHENTICATED on every RPC of every acms service", async () => {
      const wrong: string[] = [];
      for (const { service, method, id } of allMethods) {
        const err = await failure(callMethod(t.client(service, "not-a-real-key", w.apiScope, protocol), method));
        if (err.code !== Code.Unauthenticated) wrong.push(`${id}: ${Code[err.code]} ${err.rawMessage}`);
      }
      expect(wrong).toEqual([]);
    });

    test("a malformed authorization value (the key without Bearer, or Basic) is UNAUTHENTICATED", async () => {
      for (const value of [t.keys.writer, `Basic ${t.keys.writer}`, "Bearer"]) {
        const res = await fetch(`${t.server.url}/acms.v1.TextBackendService/Search`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: value, "acms-scope": w.apiScope },
          body: JSON.stringify({ query: "zebra" }),
        });
        expect(res.status).toBe(401);
        expect(((await res.json()) as { code: string }).code).toBe("unauthenticated");
      }
    });

    test("server reflection needs a key too (every RPC except health)", async () => {
      async function* req() {
        yield { messageRequest: { case: "listServices" as const, value: "" } };
      }
      const err = await failure(
        callMethod(t.client(ServerReflection, undefined, undefined, protocol), ServerReflection.method.serverReflectionInfo, {}),
      );
      expect(Code[err.code]).toBe("Unauthenticated");
      const alpha = await failure(
        callMethod(
          t.client(ServerReflectionV1alpha, undefined, undefined, protocol),
          ServerReflectionV1alpha.method.serverReflectionInfo,
          {},
        ),
      );
      expect(Code[alpha.code]).toBe("Unauthenticated");
      const ok = t.client(ServerReflection, "reader", undefined, protocol);
      const out = [];
      for await (const m of ok.serverReflectionInfo(req())) out.push(m);
      expect(out.length).toBe(1);
    });

    test("health answers without a key, and ignores an unknown one", async () => {
      const res = await t.client(Health, undefined, undefined, protocol).check({ service: "" });
      expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const bad = await t.client(Health, "not-a-real-key", undefined, protocol).check({ service: "" });
      expect(bad.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    });
  });

  describe.each(PROTOCOLS)("acms-scope: <scope_id> (%s)", (protocol) => {
    test("missing acms-scope is FAILED_PRECONDITION on every scoped RPC", async () => {
      const wrong: string[] = [];
      for (const { service, method, id } of scopedMethods) {
        const err = await failure(callMethod(t.client(service, "writer", undefined, protocol), method));
        if (err.code !== Code.FailedPrecondition) wrong.push(`${id}: ${Code[err.code]} ${err.rawMessage}`);
      }
      expect(wrong).toEqual([]);
    });

    test("an unknown scope id is NOT_FOUND on every scoped RPC", async () => {
      const ghost = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
      const wrong: string[] = [];
      for (const { service, method, id } of scopedMethods) {
        const err = await failure(callMethod(t.client(service, "writer", ghost, protocol), method));
        if (err.code !== Code.NotFound) wrong.push(`${id}: ${Code[err.code]} ${err.rawMessage}`);
      }
      expect(wrong).toEqual([]);
    });

    test("another principal's scope is NOT_FOUND on every scoped RPC, indistinguishable from an unknown one", async () => {
      const ghost = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
      const wrong: string[] = [];
      for (const { service, method, id } of scopedMethods) {
        const theirs = await failure(callMethod(t.client(service, "writer", w.otherScope, protocol), method));
        const unknown = await failure(callMethod(t.client(service, "writer", ghost, protocol), method));
        if (theirs.code !== Code.NotFound) wrong.push(`${id}: ${Code[theirs.code]} ${theirs.rawMessage}`);
        else if (blankId(theirs.rawMessage, w.otherScope) !== blankId(unknown.rawMessage, ghost))
          wrong.push(`${id}: "${theirs.rawMessage}" vs "${unknown.rawMessage}"`);
        else if (theirs.details.length !== unknown.details.length) wrong.push(`${id}: details differ`);
      }
      expect(wrong).toEqual([]);
    });

    test("a garbage or oversize acms-scope value is NOT_FOUND, not a crash", async () => {
      for (const bad of ["not a scope", "x".repeat(5000), "../../etc/passwd"]) {
        await expectCode(t.client(TextBackendService, "writer", bad, protocol).search({ query: "zebra" }), Code.NotFound);
      }
    });

    test("RPCs outside the scoped list do not require acms-scope", async () => {
      const wrong: string[] = [];
      for (const { service, method, id } of unscopedMethods) {
        const err = await failure(callMethod(t.client(service, "writer", undefined, protocol), method)).catch(() => undefined);
        if (err?.code === Code.FailedPrecondition) wrong.push(`${id}: ${err.rawMessage}`);
      }
      expect(wrong).toEqual([]);
    });

    test("an acms-scope header on an unscoped RPC is ignored, even another principal's", async () => {
      const res = await t.client(RegistryService, "writer", w.otherScope, protocol).listProjects({});
      expect(res.projects.map((p) => p.name)).toContain("local/api");
    });

    test("a valid key and own scope pass the header checks (a scoped RPC answers)", async () => {
      const res = await t.client(TextBackendService, "writer", w.apiScope, protocol).search({ query: "zebra" });
      expect(res.scopeId).toBe(w.apiScope);
    });
  });
});
