import { Code } from "@connectrpc/connect";
import { RagService, Source, type HybridResult } from "../../gen/acms/v1/rag_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { badFields, expectCode } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { ENV, loadRagCorpus, type RagCorpus } from "./rag-fixture.js";

let t: TestServer;
let c: RagCorpus;
const leaksBefore = preventedLeaks.prevented;

beforeAll(async () => {
  t = await startTestServer({ env: ENV });
  c = await loadRagCorpus(t);
}, 60_000);
afterAll(async () => {
  expect(preventedLeaks.prevented).toBe(leaksBefore);
  await t.close(true);
});

const rag = (scope: string, principal = "writer") => t.client(RagService, principal, scope);
const uris = (rs: readonly HybridResult[]) => rs.map((r) => r.ukoUri);
const sourcesOf = (r: HybridResult) => r.contributions.map((x) => Source[x.source]);

function expectOrdered(rs: readonly HybridResult[]): void {
  for (let i = 0; i < rs.length; i++) {
    expect(rs[i].score).toBeGreaterThanOrEqual(0);
    expect(rs[i].score).toBeLessThanOrEqual(1);
    if (i > 0) expect(rs[i - 1].score > rs[i].score || (rs[i - 1].score === rs[i].score && rs[i - 1].ukoUri < rs[i].ukoUri)).toBe(true);
  }
}

describe("HybridSearch", () => {
  it("fuses keyword, vector and graph evidence into one explained ranking", async () => {
    const res = await rag(c.scope).hybridSearch({ query: "retry with backoff", embedding: [1, 0, 0, 0] });
    expect(res.scopeId).toBe(c.scope);
    expect(res.partial).toBe(false);
    expect(res.failedSources).toEqual([]);
    expect(res.indexGeneration).toBeGreaterThan(0n);
    expectOrdered(res.results);
    const top = res.results[0];
    expect(top.ukoUri).toBe(`uko://${c.docs}/guide/retry.md#0`);
    expect(sourcesOf(top)).toEqual(["TEXT", "VECTOR", "GRAPH"]);
    expect(top.content).toBe("Retry failed requests with exponential backoff.");
    expect(top.metadata).toEqual({ topic: "resilience" });
    expect(top.resourceId).toBe(c.docs);
    expect(top.path).toBe("guide/retry.md");
    // The fused score is the normalised RRF sum of the ranks it explains (k = 60, three sources).
    for (const r of res.results) {
      const raw = r.contributions.reduce((s, x) => s + 1 / (60 + x.rank), 0);
      expect(r.score).toBeCloseTo(raw / (3 / 61), 12);
      for (const x of r.contributions) {
        expect(x.rank).toBeGreaterThanOrEqual(1);
        expect(x.score).toBeGreaterThanOrEqual(0);
        expect(x.score).toBeLessThanOrEqual(1);
      }
    }
    // The vector contribution carries the cosine; the keyword one the BM25 score of the text source.
    expect(top.contributions.find((x) => x.source === Source.VECTOR)!.score).toBeCloseTo(1, 6);
    // Never another tenant's unit, never a unit one graph hop names outside the scope.
    expect(res.results.every((r) => r.resourceId === c.docs || r.resourceId === c.notes)).toBe(true);
  });

  it("graph evidence reaches documents through labels and one hop, and boosts their found chunks", async () => {
    const res = await rag(c.scope).hybridSearch({ query: "operations backoff", sources: [Source.GRAPH] });
    const got = uris(res.results);
    // Backoff (label) → describedBy retry.md (1 hop); Backoff → Operations → ops.md; "operations" also labels nothing,
    // ops.md is reached through a neighbour; both documents stand as their first chunk.
    expect(got).toContain(`uko://${c.docs}/guide/retry.md#0`);
    expect(got).toContain(`uko://${c.docs}/guide/ops.md#0`);
    expect(got).not.toContain(`uko://${c.foreign}/x.md#0`);
    expect(got.some((u) => u.includes("nowhere.md"))).toBe(false);
    // Scores: the mean over the query words of the best hop weight (1, 1/2, 1/3); "operations" labels nothing.
    const score = (u: string) => res.results.find((r) => r.ukoUri === u)!.contributions[0].score;
    expect(score(`uko://${c.docs}/guide/retry.md#0`)).toBeCloseTo(0.5 / 2, 12);
    expect(score(`uko://${c.docs}/guide/ops.md#0`)).toBeCloseTo(1 / 3 / 2, 12);
    const cache = await rag(c.scope).hybridSearch({ query: "cache", sources: [Source.GRAPH] });
    // A chunk URI in the graph is that chunk.
    expect(uris(cache.results)).toEqual([`uko://${c.docs}/guide/cache.md#1`]);
    expect(cache.results[0].contributions).toEqual([expect.objectContaining({ source: Source.GRAPH, rank: 1, score: 0.5 })]);
  });

  it("keeps a path filter: a graph edge or a keyword hit under an excluded path never shows", async () => {
    for (const sources of [[], [Source.TEXT], [Source.GRAPH], [Source.VECTOR]]) {
      const res = await rag(c.noSecrets).hybridSearch({ query: "retry secret keys backoff", embedding: [1, 0, 0, 0], sources });
      expect(res.results.length).toBeGreaterThan(0);
      expect(res.results.some((r) => r.path.startsWith("secret/"))).toBe(false);
    }
    const all = await rag(c.scope).hybridSearch({ query: "retry secret keys backoff", embedding: [1, 0, 0, 0] });
    expect(all.results.some((r) => r.path.startsWith("secret/"))).toBe(true);
  });

  it("fusing the keyword source alone keeps the keyword ranking", async () => {
    const hybrid = await rag(c.scope).hybridSearch({ query: "retry backoff cache failures", sources: [Source.TEXT], topK: 50 });
    const text = await t.client(TextBackendService, "writer", c.scope).search({ query: "retry backoff cache failures", maxResults: 50 });
    expect(uris(hybrid.results)).toEqual(text.results.map((r) => r.ukoUri));
    expect(hybrid.results.every((r) => sourcesOf(r).join() === "TEXT")).toBe(true);
    expect(hybrid.results[0].score).toBe(1);
  });

  it("normalises over the sources that answered: keyword hits beside a graph that found nothing reach 1", async () => {
    // Text and graph apply (no embedding); no graph label holds "circuit" or "breakers", so only text answers.
    const res = await rag(c.scope).hybridSearch({ query: "circuit breakers" });
    expect(res.partial).toBe(false);
    expect(res.failedSources).toEqual([]);
    expect(res.results[0].ukoUri).toBe(`uko://${c.docs}/guide/retry.md#1`);
    expect(res.results.every((r) => sourcesOf(r).join() === "TEXT")).toBe(true);
    expect(res.results[0].score).toBe(1);
    for (const r of res.results) expect(r.score).toBeCloseTo(1 / (60 + r.contributions[0].rank) / (1 / 61), 12);
  });

  it("without an embedding, the vector source does not run; an empty source list means every source that applies", async () => {
    const res = await rag(c.scope).hybridSearch({ query: "retry backoff" });
    expect(res.results.some((r) => sourcesOf(r).includes("VECTOR"))).toBe(false);
    expect(res.results.some((r) => sourcesOf(r).includes("GRAPH"))).toBe(true);
    expect(res.results.some((r) => sourcesOf(r).includes("TEXT"))).toBe(true);
  });

  it("applies top_k and min_score after fusion, and says when the answer is cut", async () => {
    const full = await rag(c.scope).hybridSearch({ query: "retry backoff cache", embedding: [1, 0, 0, 0] });
    expect(full.results.length).toBeGreaterThan(3);
    const cut = await rag(c.scope).hybridSearch({ query: "retry backoff cache", embedding: [1, 0, 0, 0], topK: 2 });
    expect(uris(cut.results)).toEqual(uris(full.results).slice(0, 2));
    expect(cut.exhaustive).toBe(false);
    const min = full.results[2].score;
    const filtered = await rag(c.scope).hybridSearch({ query: "retry backoff cache", embedding: [1, 0, 0, 0], minScore: min });
    expect(uris(filtered.results)).toEqual(uris(full.results.filter((r) => r.score >= min)));
  });

  it("honours rrf_k and per-source weights", async () => {
    const req = { query: "retry backoff cache", embedding: [0, 0, 1, 0] };
    const k1 = await rag(c.scope).hybridSearch({ ...req, rrfK: 1 });
    for (const r of k1.results) {
      const raw = r.contributions.reduce((s, x) => s + 1 / (1 + x.rank), 0);
      expect(r.score).toBeCloseTo(raw / (3 / 2), 12);
    }
    const vectorHeavy = await rag(c.scope).hybridSearch({ ...req, weights: [{ source: Source.VECTOR, weight: 1000 }] });
    expect(vectorHeavy.results[0].ukoUri).toBe(`uko://${c.docs}/guide/cache.md#0`);
    const textOnlyWeight = await rag(c.scope).hybridSearch({
      ...req,
      weights: [
        { source: Source.VECTOR, weight: 0 },
        { source: Source.GRAPH, weight: 0 },
      ],
    });
    const textOrder = await rag(c.scope).hybridSearch({ ...req, sources: [Source.TEXT] });
    expect(uris(textOnlyWeight.results).filter((u) => uris(textOrder.results).includes(u))).toEqual(uris(textOrder.results));
  });

  it("refuses bad arguments with INVALID_ARGUMENT naming the field", async () => {
    const r = rag(c.scope);
    expect(await badFields(r.hybridSearch({ query: "  " }))).toEqual(["query"]);
    expect(await badFields(r.hybridSearch({ query: "x", topK: 0 }))).toEqual(["top_k"]);
    expect(await badFields(r.hybridSearch({ query: "x", topK: 100_000 }))).toEqual(["top_k"]);
    expect(await badFields(r.hybridSearch({ query: "x", rrfK: 0 }))).toEqual(["rrf_k"]);
    expect(await badFields(r.hybridSearch({ query: "x", rrfK: -5 }))).toEqual(["rrf_k"]);
    expect(await badFields(r.hybridSearch({ query: "x", minScore: 1.5 }))).toEqual(["min_score"]);
    expect(await badFields(r.hybridSearch({ query: "x", minScore: Number.NaN }))).toEqual(["min_score"]);
    expect(await badFields(r.hybridSearch({ query: "x", embedding: [1, 0] }))).toEqual(["embedding"]);
    expect(await badFields(r.hybridSearch({ query: "x", embedding: [0, 0, 0, 0] }))).toEqual(["embedding"]);
    expect(await badFields(r.hybridSearch({ query: "x", sources: [Source.TEXT, Source.UNSPECIFIED] }))).toEqual(["sources[1]"]);
    expect(await badFields(r.hybridSearch({ query: "x", sources: [Source.VECTOR] }))).toEqual(["embedding"]);
    expect(await badFields(r.hybridSearch({ query: "x", weights: [{ source: Source.TEXT, weight: -1 }] }))).toEqual(["weights[0].weight"]);
    expect(await badFields(r.hybridSearch({ query: "x", weights: [{ source: Source.UNSPECIFIED, weight: 1 }] }))).toEqual([
      "weights[0].source",
    ]);
    expect(await badFields(r.hybridSearch({ query: "x", sources: [Source.TEXT], weights: [{ source: Source.TEXT, weight: 0 }] }))).toEqual([
      "weights",
    ]);
    // Duplicated sources are harmless.
    const dup = await r.hybridSearch({ query: "retry", sources: [Source.TEXT, Source.TEXT] });
    expect(dup.results.length).toBeGreaterThan(0);
  });

  it("streams exactly the unary answer, in order, and flags partiality in metadata", async () => {
    const req = { query: "retry backoff cache", embedding: [1, 0, 0, 0] };
    const unary = await rag(c.scope).hybridSearch(req);
    const streamed: HybridResult[] = [];
    let headers: Headers | undefined;
    for await (const m of rag(c.scope).hybridSearchStream(req, { onHeader: (h) => (headers = h) })) streamed.push(m.result!);
    expect(streamed.map((r) => [r.ukoUri, r.score])).toEqual(unary.results.map((r) => [r.ukoUri, r.score]));
    expect(headers?.get("acms-partial")).toBe("false");
    expect(headers?.get("acms-scope-id")).toBe(c.scope);
    expect(headers?.get("acms-exhaustive")).toBe(String(unary.exhaustive));
    expect(headers?.get("acms-index-generation")).toBe(String(unary.indexGeneration));
    expect(
      await badFields(
        (async () => {
          for await (const _ of rag(c.scope).hybridSearchStream({ query: "" })) void _;
        })(),
      ),
    ).toEqual(["query"]);
  });

  it("isolates tenants: another principal's scope sees only its own units, a foreign scope id is NOT_FOUND", async () => {
    const mine = await rag(c.otherScope, "other").hybridSearch({ query: "retry backoff", embedding: [1, 0, 0, 0] });
    expect(mine.results.length).toBeGreaterThan(0);
    expect(mine.results.every((r) => r.resourceId === c.foreign)).toBe(true);
    await expectCode(rag(c.scope, "other").hybridSearch({ query: "retry" }), Code.NotFound);
    await expectCode(t.client(RagService, "writer").hybridSearch({ query: "retry" }), Code.FailedPrecondition);
    const reader = await rag(c.scope, "reader")
      .hybridSearch({ query: "retry" })
      .catch((e) => e);
    expect(Code[(reader as { code: Code }).code]).toBe(Code[Code.NotFound]);
  });

  it("treats hostile query text as words: no SPARQL or FTS5 injection reaches another tenant", async () => {
    const hostile = [
      `") } } SELECT * WHERE { GRAPH ?g { ?s ?p ?o } } #`,
      `backoff" || true || "`,
      `retry}} UNION { GRAPH <uko://${c.foreign}/> { ?s ?p ?o } }`,
      "rid : * OR body : retry",
      "NEAR(retry backoff) ^*",
    ];
    for (const query of hostile) {
      const res = await rag(c.scope).hybridSearch({ query, embedding: [1, 0, 0, 0] });
      expect(res.partial).toBe(false);
      expect(res.results.every((r) => r.resourceId === c.docs || r.resourceId === c.notes)).toBe(true);
    }
  });

  it("FetchContent returns units in exactly the fused order", async () => {
    const res = await rag(c.scope).hybridSearch({ query: "retry backoff cache", embedding: [1, 0, 0, 0] });
    const asked = uris(res.results).reverse();
    const fetched = await rag(c.scope).fetchContent({ ukoUris: asked });
    expect(fetched.items.map((i) => i.ukoUri)).toEqual(asked);
    expect(fetched.missing).toEqual([]);
    expect(fetched.scopeId).toBe(c.scope);
    const byUri = new Map(res.results.map((r) => [r.ukoUri, r.content]));
    for (const i of fetched.items) expect(i.content).toBe(byUri.get(i.ukoUri));
  });

  it("FetchContent: documents whole, chunks with their index, duplicates per position, missing listed once", async () => {
    const docUri = `uko://${c.docs}/guide/retry.md`;
    const chunk1 = `${docUri}#1`;
    const gone = `uko://${c.docs}/guide/nowhere.md`;
    const noChunk = `${docUri}#9`;
    const res = await rag(c.scope).fetchContent({ ukoUris: [chunk1, docUri, gone, chunk1, noChunk, gone] });
    expect(res.items.map((i) => i.ukoUri)).toEqual([chunk1, docUri, chunk1]);
    expect(res.items[0]).toMatchObject({
      resourceId: c.docs,
      path: "guide/retry.md",
      content: "Circuit breakers stop cascading failures.",
      chunkIndex: 1,
      metadata: { topic: "resilience" },
    });
    expect(res.items[1].content).toBe("Retry failed requests with exponential backoff.\nCircuit breakers stop cascading failures.");
    expect(res.items[1].chunkIndex).toBeUndefined();
    expect(res.missing).toEqual([gone, noChunk]);
    expect((await rag(c.scope).fetchContent({ ukoUris: [] })).items).toEqual([]);
  });

  it("FetchContent refuses out-of-scope URIs with ScopeViolation (existing or not) and malformed ones with INVALID_ARGUMENT", async () => {
    const foreignUri = `uko://${c.foreign}/x.md#0`;
    const err = await expectCode(
      rag(c.scope).fetchContent({ ukoUris: [`uko://${c.docs}/guide/retry.md`, foreignUri] }),
      Code.PermissionDenied,
    );
    expect(err.findDetails(ScopeViolationSchema)[0].resourceIds).toEqual([c.foreign]);
    await expectCode(rag(c.scope).fetchContent({ ukoUris: ["uko://01JZZZZZZZZZZZZZZZZZZZZZZZ/a.md"] }), Code.PermissionDenied);
    await expectCode(rag(c.noSecrets).fetchContent({ ukoUris: [`uko://${c.docs}/secret/keys.md`] }), Code.PermissionDenied);
    expect(await badFields(rag(c.scope).fetchContent({ ukoUris: [`uko://${c.docs}/guide/retry.md`, "http://nope"] }))).toEqual([
      "uko_uris[1]",
    ]);
    expect(await badFields(rag(c.scope).fetchContent({ ukoUris: [`uko://${c.docs}/../etc/passwd`] }))).toEqual(["uko_uris[0]"]);
    expect(await badFields(rag(c.scope).fetchContent({ ukoUris: [`uko://${c.docs}/a.md#-1`] }))).toEqual(["uko_uris[0]"]);
  });
});
