import { Code, ConnectError } from "@connectrpc/connect";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { MAX_DOCUMENT_BYTES } from "../../src/application/indexing/upsert-validation.js";
import { badFields, expectCode } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { doc, makeResource, makeScope, upsert } from "./index-fixture.js";

const DIM = 4;
let t: TestServer;
let api: string;
let web: string;
let secret: string;
let scope: string;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: String(DIM) } });
  api = await makeResource(t, "writer", "local/api", "api");
  web = await makeResource(t, "writer", "local/web", "web");
  secret = await makeResource(t, "other", "other/secret", "secret");
  scope = await makeScope(t, "writer", { projects: ["local/api", "local/web"], temporalScope: "all" });
});
afterAll(async () => {
  await t.close(true);
});

const text = () => t.client(TextBackendService, "writer", scope);
const index = (p = "writer") => t.client(IndexService, p);
const uris = async (query: string, maxResults?: number) => (await text().search({ query, maxResults })).results.map((r) => r.ukoUri);

describe("IndexService.UpsertDocuments", () => {
  it("commits each message on its own: a bad message mid-stream writes nothing, earlier ones stay", async () => {
    const p = upsert(t, "writer", [
      { resourceId: api, documents: [doc("tx/first.md", "marmalade first message")] },
      {
        resourceId: api,
        documents: [
          doc("tx/second-ok.md", "marmalade second message valid part"),
          doc("tx/second-bad.md", "marmalade", { chunks: [{ text: "marmalade", embedding: [1, 2, 3] }] }),
        ],
      },
      { resourceId: api, documents: [doc("tx/third.md", "marmalade third message")] },
    ]);
    const err = await expectCode(p, Code.InvalidArgument);
    expect(err.rawMessage).toContain("(stream message 2)");
    expect(await badFields(Promise.reject(err))).toEqual(["documents[1].chunks[0].embedding"]);
    expect(await uris("marmalade")).toEqual([`uko://${api}/tx/first.md#0`]);
  });

  it("reports counts and a generation that grows with every committed write", async () => {
    const r1 = await upsert(t, "writer", [
      { resourceId: api, documents: [doc("gen/a.md", "quokka one"), doc("gen/b.md", "quokka two")] },
      {
        resourceId: web,
        documents: [doc("gen/c.md", "quokka three", { chunks: [{ text: "quokka three", embedding: [0.1, 0.2, 0.3, 0.4] }] })],
      },
    ]);
    expect(r1).toMatchObject({ documentsUpserted: 3, chunksIndexed: 3, vectorsIndexed: 1, messagesReceived: 2 });
    const r2 = await upsert(t, "writer", [{ resourceId: api, documents: [doc("gen/a.md", "quokka one changed")] }]);
    expect(r2.indexGeneration).toBeGreaterThan(r1.indexGeneration);
    const search = await text().search({ query: "quokka" });
    expect(search.indexGeneration).toBe(r2.indexGeneration);
  });

  it("treats an identical re-upsert as a no-op: no new version, same generation", async () => {
    const first = await upsert(t, "writer", [
      { resourceId: api, documents: [doc("noop/a.md", "wombat burrow", { metadata: { lang: "en" } })] },
    ]);
    const again = await upsert(t, "writer", [
      { resourceId: api, documents: [doc("noop/a.md", "wombat burrow", { metadata: { lang: "en" } })] },
    ]);
    expect(again).toMatchObject({ documentsUpserted: 0, chunksIndexed: 0, indexGeneration: first.indexGeneration });
    const changed = await upsert(t, "writer", [
      { resourceId: api, documents: [doc("noop/a.md", "wombat burrow", { metadata: { lang: "de" } })] },
    ]);
    expect(changed.documentsUpserted).toBe(1);
    // The temporal scope is `all`: two versions exist, the answer still holds the URI once, with the live metadata first on ties.
    const res = (await text().search({ query: "wombat" })).results;
    expect(res.map((r) => r.ukoUri)).toEqual([`uko://${api}/noop/a.md#0`]);
    expect(res[0].metadata).toEqual({ lang: "de" });
  });

  it("chunks content server-side by tokens, with no vectors", async () => {
    const words = Array.from({ length: 600 }, (_, i) => `w${i}`).join(" ");
    const r = await upsert(t, "writer", [{ resourceId: api, documents: [doc("long/a.md", `${words} pangolin`)] }]);
    expect(r.chunksIndexed).toBeGreaterThan(2);
    expect(r.vectorsIndexed).toBe(0);
    const [hit] = (await text().search({ query: "pangolin" })).results;
    expect(hit.ukoUri).toBe(`uko://${api}/long/a.md#${r.chunksIndexed - 1}`);
  });

  it("names every bad field of a message", async () => {
    const one = (d: ReturnType<typeof doc>) => badFields(upsert(t, "writer", [{ resourceId: api, documents: [d] }]));
    expect(await badFields(upsert(t, "writer", [{ resourceId: api, documents: [] }]))).toEqual(["documents"]);
    expect(await one(doc("../escape.md", "x"))).toEqual(["documents[0].path"]);
    expect(await one(doc("/abs.md", "x"))).toEqual(["documents[0].path"]);
    expect(await one(doc("a#b.md", "x"))).toEqual(["documents[0].path"]);
    expect(await one(doc("", "x"))).toEqual(["documents[0].path"]);
    expect(await one(doc("empty.md", "   "))).toEqual(["documents[0].content"]);
    expect(await one(doc("big.md", "x".repeat(MAX_DOCUMENT_BYTES + 1)))).toEqual(["documents[0].content"]);
    expect(await one(doc("c.md", "x", { chunks: [{ text: "" }] }))).toEqual(["documents[0].chunks[0].text"]);
    expect(await one(doc("c.md", "x", { chunks: [{ text: "x", embedding: [0, 0, 0, 0] }] }))).toEqual(["documents[0].chunks[0].embedding"]);
    expect(await one(doc("c.md", "x", { chunks: [{ text: "x", embedding: [1, Number.NaN, 0, 0] }] }))).toEqual([
      "documents[0].chunks[0].embedding",
    ]);
    expect(await one(doc("c.md", "x", { chunks: [{ text: "x", embedding: [1, 2, 3, 4, 5] }] }))).toEqual([
      "documents[0].chunks[0].embedding",
    ]);
    const dup = await badFields(upsert(t, "writer", [{ resourceId: api, documents: [doc("d.md", "x"), doc("d.md", "y")] }]));
    expect(dup).toEqual(["documents[1].path"]);
    const many = await badFields(
      upsert(t, "writer", [{ resourceId: api, documents: [doc("ok.md", "x"), doc("..", "x"), doc("e.md", "")] }]),
    );
    expect(many).toEqual(["documents[1].path", "documents[2].content"]);
  });

  it("refuses writers without write access to the resource", async () => {
    await expectCode(upsert(t, "reader", [{ resourceId: api, documents: [doc("r.md", "x")] }]), Code.PermissionDenied);
    await expectCode(upsert(t, "writer", [{ resourceId: secret, documents: [doc("r.md", "x")] }]), Code.PermissionDenied);
    await expectCode(upsert(t, "other", [{ resourceId: api, documents: [doc("r.md", "x")] }]), Code.PermissionDenied);
    await expectCode(
      upsert(t, "writer", [{ resourceId: "01JZZZZZZZZZZZZZZZZZZZZZZZ", documents: [doc("r.md", "x")] }]),
      Code.PermissionDenied,
    );
  });
});

describe("IndexService.DeleteDocuments", () => {
  it("counts deleted documents; deleted ones stay visible to recent and all only", async () => {
    await upsert(t, "writer", [{ resourceId: api, documents: [doc("del/a.md", "okapi stripes"), doc("del/b.md", "okapi forest")] }]);
    const r = await index().deleteDocuments({ resourceId: api, paths: ["del/a.md", "del/missing.md"] });
    expect(r.count).toBe(1);
    const current = await makeScope(t, "writer", { projects: ["local/api"] });
    const recent = await makeScope(t, "writer", { projects: ["local/api"], temporalScope: "recent" });
    const q = async (s: string) =>
      (await t.client(TextBackendService, "writer", s).search({ query: "okapi" })).results.map((x) => x.path).sort();
    expect(await q(current)).toEqual(["del/b.md"]);
    expect(await q(recent)).toEqual(["del/a.md", "del/b.md"]);
    expect((await index().deleteDocuments({ resourceId: api, paths: ["del/a.md"] })).count).toBe(0);
  });

  it("validates paths", async () => {
    expect(await badFields(index().deleteDocuments({ resourceId: api, paths: [] }))).toEqual(["paths"]);
    expect(await badFields(index().deleteDocuments({ resourceId: api, paths: ["ok.md", "../x"] }))).toEqual(["paths[1]"]);
    await expectCode(index("reader").deleteDocuments({ resourceId: api, paths: ["a.md"] }), Code.PermissionDenied);
  });
});

describe("IndexService.Rebuild", () => {
  it("incremental and full rebuilds keep every answer and bump the generation", async () => {
    await upsert(t, "writer", [{ resourceId: web, documents: [doc("rb/a.md", "capybara river"), doc("rb/b.md", "capybara grass")] }]);
    await upsert(t, "writer", [{ resourceId: web, documents: [doc("rb/a.md", "capybara river bank")] }]);
    const before = await text().search({ query: "capybara river grass" });
    const inc = await index().rebuild({ resourceIds: [web], fullRebuild: false });
    expect(inc.indexGeneration).toBeGreaterThan(before.indexGeneration);
    expect(inc).toMatchObject({ resourcesRebuilt: 1 });
    expect(inc.documentsReindexed).toBeGreaterThanOrEqual(3);
    const afterInc = await text().search({ query: "capybara river grass" });
    expect(afterInc.results).toEqual(before.results);
    const full = await index().rebuild({ resourceIds: [web], fullRebuild: true });
    expect(full.indexGeneration).toBeGreaterThan(inc.indexGeneration);
    expect((await text().search({ query: "capybara river grass" })).results).toEqual(before.results);
  });

  it("with no ids rebuilds every resource the key may write, and no other", async () => {
    const r = await index().rebuild({ resourceIds: [], fullRebuild: false });
    expect(r.resourcesRebuilt).toBe(2);
    await expectCode(index().rebuild({ resourceIds: [secret], fullRebuild: true }), Code.PermissionDenied);
    await expectCode(index("reader").rebuild({ resourceIds: [], fullRebuild: false }), Code.PermissionDenied);
  });

  it("with no ids never rebuilds a resource another tenant owns and merely linked into the caller's project", async () => {
    const before = await index().rebuild({ resourceIds: [], fullRebuild: false });
    const foreign = await makeResource(t, "other", "other/linked", "foreign");
    await upsert(t, "other", [{ resourceId: foreign, documents: [doc("f.md", "foreign words"), doc("g.md", "more foreign words")] }]);
    await t.client(RegistryService, "admin").linkResource({ project: "local/api", resourceId: foreign, alias: "foreign-here" });
    const after = await index().rebuild({ resourceIds: [], fullRebuild: true });
    expect([after.resourcesRebuilt, after.documentsReindexed]).toEqual([before.resourcesRebuilt, before.documentsReindexed]);
    await expectCode(index().rebuild({ resourceIds: [foreign], fullRebuild: true }), Code.PermissionDenied);
    expect((await index("other").rebuild({ resourceIds: [], fullRebuild: false })).documentsReindexed).toBeGreaterThanOrEqual(2);
  });

  it("answers searches running during a rebuild from a whole state", async () => {
    const docs = Array.from({ length: 200 }, (_, i) => doc(`busy/${i}.md`, `tapir number ${i}`));
    await upsert(t, "writer", [{ resourceId: api, documents: docs }]);
    const counts = new Set<number>();
    const rebuild = index().rebuild({ resourceIds: [api], fullRebuild: true });
    const searches = Array.from({ length: 10 }, async () =>
      counts.add((await text().search({ query: "tapir", maxResults: 1000 })).results.length),
    );
    await Promise.all([rebuild, ...searches]);
    expect([...counts]).toEqual([200]);
  });
});

describe("IndexService.PutTriples", () => {
  const iri = (value: string) => ({ kind: TermKind.IRI, value });
  const good = [
    { subject: iri("http://ex.org/a"), predicate: iri("http://ex.org/p"), object: { kind: TermKind.LITERAL, value: "x", language: "en" } },
  ];

  it("checks every term before anything else", async () => {
    const bad = [
      { subject: { kind: TermKind.LITERAL, value: "x" }, predicate: iri("http://ex.org/p"), object: iri("http://ex.org/o") },
      { subject: iri("http://ex.org/a"), predicate: iri("http://ex.org/has space"), object: iri("<http://ex.org/o>") },
    ];
    expect(await badFields(index().putTriples({ resourceId: api, triples: bad, replace: false }))).toEqual([
      "triples[0].subject",
      "triples[1].predicate",
      "triples[1].object",
    ]);
    await expectCode(index("reader").putTriples({ resourceId: api, triples: good, replace: false }), Code.PermissionDenied);
  });

  it("writes to the graph backend when one runs, else answers UNIMPLEMENTED", async () => {
    try {
      const r = await index().putTriples({ resourceId: api, triples: good, replace: true });
      expect(r.count).toBe(1);
    } catch (err) {
      expect(Code[ConnectError.from(err).code]).toBe(Code[Code.Unimplemented]);
    }
  });
});

describe("restart", () => {
  it("keeps documents and the generation", async () => {
    const r = await upsert(t, "writer", [{ resourceId: api, documents: [doc("restart/a.md", "axolotl gills")] }]);
    const before = await text().search({ query: "axolotl" });
    await t.close(false);
    t = await startTestServer({ dataDir: t.dataDir, keyEntries: t.keyEntries, keys: t.keys, env: { ACMS_EMBEDDING_DIM: String(DIM) } });
    const after = await t.client(TextBackendService, "writer", scope).search({ query: "axolotl" });
    expect(after.results).toEqual(before.results);
    expect(after.indexGeneration).toBe(r.indexGeneration);
    const next = await upsert(t, "writer", [{ resourceId: api, documents: [doc("restart/b.md", "axolotl again")] }]);
    expect(next.indexGeneration).toBe(r.indexGeneration + 1n);
  });

  it("never let a result outside a scope through to the leak guard", () => {
    expect(preventedLeaks.prevented).toBe(0);
  });
});
