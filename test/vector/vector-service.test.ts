import { Code, createClient } from "@connectrpc/connect";
import { IndexService, type UpsertDocumentsRequest } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ResolveScopeRequestSchema, ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { VectorBackendService, type VectorResult } from "../../gen/acms/v1/vector_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { UpsertDocumentsRequestSchema } from "../../gen/acms/v1/index_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import type { Backends } from "../../src/server/composition/backends.js";
import { failure } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { withScopedRouterTransport } from "../support/with-scoped-router-transport.js";
import { cosine } from "./vector-fixtures.js";

const DIM = 8;
const ENV = { ACMS_EMBEDDING_DIM: String(DIM) };

function e(...head: number[]): number[] {
  return Array.from({ length: DIM }, (_, i) => head[i] ?? 0);
}

async function badField(p: Promise<unknown>): Promise<string> {
  const err = await failure(p);
  expect(Code[err.code]).toBe(Code[Code.InvalidArgument]);
  return err.findDetails(BadRequestSchema)[0].fieldViolations[0].field;
}

let t: TestServer;
const ids: Record<string, string> = {};
let lastGeneration = 0n;

async function upsert(principal: string, msgs: Array<MessageInitShape<typeof UpsertDocumentsRequestSchema>>): Promise<void> {
  async function* stream() {
    for (const m of msgs) yield m as UpsertDocumentsRequest;
  }
  const res = await t.client(IndexService, principal).upsertDocuments(stream());
  lastGeneration = res.indexGeneration;
}

async function scope(principal: string, req: MessageInitShape<typeof ResolveScopeRequestSchema>): Promise<string> {
  return (await t.client(ScopeService, principal).resolveScope(req)).scope!.scopeId;
}

async function search(principal: string, scopeId: string, embedding: number[], more: { topK?: number; minScore?: number } = {}) {
  return t.client(VectorBackendService, principal, scopeId).similaritySearch({ embedding, ...more });
}

const doc = (path: string, chunks: Array<[string, number[]]>, metadata: Record<string, string> = {}) => ({
  path,
  content: chunks.map(([text]) => text).join("\n"),
  metadata,
  chunks: chunks.map(([text, embedding]) => ({ text, embedding })),
});

beforeAll(async () => {
  t = await startTestServer({ env: ENV });
  const admin = t.client(RegistryService, "admin");
  for (const name of ["local/api", "local/web", "other/x"]) await admin.createProject({ name });
  const reg = async (project: string, alias: string) => (await admin.registerResource({ project, alias, kind: "repo" })).resource!.id;
  ids.API = await reg("local/api", "api");
  ids.WEB = await reg("local/web", "web");
  ids.SECRET = await reg("other/x", "secret");
  await upsert("writer", [
    {
      resourceId: ids.API,
      documents: [
        doc(
          "src/server.ts",
          [
            ["server chunk zero", e(0.9, 0.1)],
            ["server chunk one", e(0.2, 1)],
          ],
          { lang: "ts" },
        ),
        doc("docs/guide.md", [["guide chunk", e(0.6, 0.4)]], { lang: "md" }),
        doc("src/opposite.ts", [["opposite chunk", e(-1, 0.05)]]),
      ],
    },
    { resourceId: ids.WEB, documents: [doc("index.html", [["web chunk", e(0.97, 0.02)]])] },
  ]);
  await upsert("other", [{ resourceId: ids.SECRET, documents: [doc("secret.md", [["secret chunk", e(1)]])] }]);
});

afterAll(async () => {
  await t.close(true);
});

describe("VectorBackendService over the real server", () => {
  it("answers the nearest in-scope chunks with content, metadata, cosine and the scope's identity", async () => {
    const scopeId = await scope("reader", { projects: ["local/api"] });
    const res = await search("reader", scopeId, e(1));
    expect(res.scopeId).toBe(scopeId);
    expect(res.exhaustive).toBe(true);
    expect(res.indexGeneration).toBeGreaterThanOrEqual(1n);
    expect(res.results.map((r) => r.ukoUri)).toEqual([
      `uko://${ids.API}/src/server.ts#0`,
      `uko://${ids.API}/docs/guide.md#0`,
      `uko://${ids.API}/src/server.ts#1`,
    ]);
    const top = res.results[0];
    expect(top).toMatchObject({ content: "server chunk zero", resourceId: ids.API, path: "src/server.ts", metadata: { lang: "ts" } });
    expect(top.score).toBeCloseTo(cosine(e(1), e(0.9, 0.1)), 5);
    for (const r of res.results) expect(r.score).toBeGreaterThanOrEqual(0);
  });

  it("never returns a negative cosine", async () => {
    const scopeId = await scope("reader", { projects: ["local/api"] });
    const res = await search("reader", scopeId, e(-1));
    expect(res.results.map((r) => r.path)).toEqual(["src/opposite.ts"]);
    const none = await search("reader", scopeId, e(0, 0, 1));
    expect(none.results.every((r) => r.score >= 0)).toBe(true);
  });

  it("widens and narrows with the scope: projects, resources and path globs", async () => {
    const both = await scope("reader", { projects: ["local/api", "local/web"] });
    expect((await search("reader", both, e(1), { topK: 2 })).results.map((r) => r.resourceId)).toEqual([ids.WEB, ids.API]);
    const onlyWeb = await scope("reader", { projects: ["local/api", "local/web"], includeResources: ["web"] });
    expect((await search("reader", onlyWeb, e(1))).results.map((r) => r.path)).toEqual(["index.html"]);
    const srcOnly = await scope("reader", { projects: ["local/api"], includePaths: ["src/**"], excludePaths: ["**/opposite.ts"] });
    expect((await search("reader", srcOnly, e(1))).results.map((r) => r.ukoUri)).toEqual([
      `uko://${ids.API}/src/server.ts#0`,
      `uko://${ids.API}/src/server.ts#1`,
    ]);
  });

  it("honours top_k and min_score, and refuses bad values naming the field", async () => {
    const scopeId = await scope("reader", { projects: ["local/api"] });
    expect((await search("reader", scopeId, e(1), { topK: 1 })).results).toHaveLength(1);
    const high = await search("reader", scopeId, e(1), { minScore: 0.9 });
    expect(high.results.map((r) => r.path)).toEqual(["src/server.ts"]);
    expect(await badField(search("reader", scopeId, []))).toBe("embedding");
    expect(await badField(search("reader", scopeId, [1, 0, 0]))).toBe("embedding");
    expect(await badField(search("reader", scopeId, e(1), { topK: 0 }))).toBe("top_k");
    expect(await badField(search("reader", scopeId, e(1), { topK: 1001 }))).toBe("top_k");
    expect(await badField(search("reader", scopeId, e(1), { minScore: 1.5 }))).toBe("min_score");
  });

  it("streams exactly the unary results, in order", async () => {
    const scopeId = await scope("reader", { projects: ["local/api", "local/web"] });
    const unary = await search("reader", scopeId, e(1, 0.3));
    const streamed: VectorResult[] = [];
    for await (const m of t.client(VectorBackendService, "reader", scopeId).similaritySearchStream({ embedding: e(1, 0.3) }))
      streamed.push(m.result!);
    expect(streamed.map((r) => [r.ukoUri, r.score])).toEqual(unary.results.map((r) => [r.ukoUri, r.score]));
    expect(streamed.length).toBeGreaterThan(2);
  });

  it("streamed errors carry the field too", async () => {
    const scopeId = await scope("reader", { projects: ["local/api"] });
    const consume = async () => {
      for await (const _ of t.client(VectorBackendService, "reader", scopeId).similaritySearchStream({ embedding: e(1), topK: -1 })) void _;
    };
    expect(await badField(consume())).toBe("top_k");
  });

  describe("isolation attacks", () => {
    it("a resource outside the scope never answers, even holding the exact match", async () => {
      const scopeId = await scope("writer", { projects: ["local/api"] });
      const res = await search("writer", scopeId, e(1), { topK: 1000 });
      expect(res.results.some((r) => r.resourceId === ids.SECRET || r.resourceId === ids.WEB)).toBe(false);
    });

    it("another principal's scope id is NOT_FOUND, and so is a made-up one", async () => {
      const othersScope = await scope("other", { projects: ["other/x"] });
      expect(Code[(await failure(search("reader", othersScope, e(1)))).code]).toBe("NotFound");
      expect(Code[(await failure(search("reader", "01J0000000000000000000ZZZZ", e(1)))).code]).toBe("NotFound");
    });

    it("a search without a scope header is refused", async () => {
      const err = await failure(t.client(VectorBackendService, "reader").similaritySearch({ embedding: e(1) }));
      expect(Code[err.code]).toBe("FailedPrecondition");
    });

    it("the owner of other/x sees only its own resource", async () => {
      const scopeId = await scope("other", { projects: ["other/x"] });
      const res = await search("other", scopeId, e(1, 1), { topK: 1000 });
      expect(res.results.map((r) => r.resourceId)).toEqual([ids.SECRET]);
    });

    it("a scope that cannot name other/x cannot reach it by globs either", async () => {
      const err = await failure(scope("reader", { projects: ["other/x"] }));
      expect(Code[err.code]).toBe("PermissionDenied");
      const scopeId = await scope("reader", { projects: ["local/api"], includePaths: ["**"] });
      const res = await search("reader", scopeId, e(1), { topK: 1000 });
      expect(new Set(res.results.map((r) => r.resourceId))).toEqual(new Set([ids.API]));
    });

    it("no result was ever dropped by the leak guard", () => {
      expect(preventedLeaks.prevented).toBe(0);
    });
  });

  it("follows writes: a changed document replaces its chunk, deletion removes it, recent/all scopes still see old versions once", async () => {
    const admin = t.client(RegistryService, "admin");
    const id = (await admin.registerResource({ project: "local/api", alias: "churn", kind: "repo" })).resource!.id;
    await upsert("writer", [{ resourceId: id, documents: [doc("a.md", [["version one", e(0, 0, 0, 1)]])] }]);
    await upsert("writer", [{ resourceId: id, documents: [doc("a.md", [["version two", e(0, 0, 0, 1, 0.2)]])] }]);
    const current = await scope("writer", { projects: ["local/api"], includeResources: ["churn"] });
    const cur = await search("writer", current, e(0, 0, 0, 1));
    expect(cur.results.map((r) => r.content)).toEqual(["version two"]);
    expect(cur.indexGeneration).toBe(lastGeneration);
    const all = await scope("writer", { projects: ["local/api"], includeResources: ["churn"], temporalScope: "all" });
    const allRes = await search("writer", all, e(0, 0, 0, 1));
    expect(allRes.results.map((r) => [r.ukoUri, r.content])).toEqual([[`uko://${id}/a.md#0`, "version one"]]);
    await t.client(IndexService, "writer").deleteDocuments({ resourceId: id, paths: ["a.md"] });
    expect((await search("writer", current, e(0, 0, 0, 1))).results).toEqual([]);
    const recent = await scope("writer", { projects: ["local/api"], includeResources: ["churn"], temporalScope: "recent" });
    expect((await search("writer", recent, e(0, 0, 0, 1))).results).toHaveLength(1);
  });

  it("answers the same after a full rebuild and after a restart (vectors reloaded from the document store)", async () => {
    const scopeId = await scope("reader", { projects: ["local/api", "local/web"] });
    const before = (await search("reader", scopeId, e(1, 0.5))).results.map((r) => [r.ukoUri, r.score]);
    await t.client(IndexService, "admin").rebuild({ resourceIds: [ids.API, ids.WEB], fullRebuild: true });
    expect((await search("reader", scopeId, e(1, 0.5))).results.map((r) => [r.ukoUri, r.score])).toEqual(before);
    const { dataDir, keyEntries, keys } = t;
    await t.close(false);
    t = await startTestServer({ env: ENV, dataDir, keyEntries, keys });
    const again = (await search("reader", scopeId, e(1, 0.5))).results.map((r) => [r.ukoUri, r.score]);
    expect(again).toEqual(before);
  });
});

describe("VectorBackendService without a vector backend", () => {
  it("is UNIMPLEMENTED", async () => {
    const change = async (b: Backends) => {
      await b.vector?.close();
      b.vector = undefined;
    };
    await withScopedRouterTransport({ env: ENV, change }, async (transport) => {
      const err = await failure(createClient(VectorBackendService, transport).similaritySearch({ embedding: e(1) }));
      expect(Code[err.code]).toBe("Unimplemented");
    });
  });
});
