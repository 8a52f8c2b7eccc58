import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RagService, Source } from "../../gen/acms/v1/rag_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { doc, makeResource, makeScope, upsert } from "../index/index-fixture.js";
import { DIM } from "./rag-fixture.js";

const DOCS = 300;

function embeddingOf(i: number): number[] {
  return Array.from({ length: DIM }, (_, d) => 1 + ((i * (d + 3)) % 7));
}

function document(i: number) {
  const texts = [`alpha beta document ${i} retry`, `alpha gamma second chunk ${i}`];
  return doc(`load/d${String(i).padStart(4, "0")}.md`, texts.join("\n"), {
    chunks: texts.map((text, c) => ({ text, embedding: embeddingOf(i + c) })),
  });
}

const chunkUris = (resource: string, from: number, to: number) =>
  new Set(
    Array.from({ length: to - from }, (_, k) =>
      [0, 1].map((c) => `uko://${resource}/load/d${String(from + k).padStart(4, "0")}.md#${c}`),
    ).flat(),
  );

describe.each([
  ["native (FTS5)", "native"],
  ["in-memory BM25", "memory"],
])("rebuild under load, keyword index %s", (_name, keywordIndex) => {
  let t: TestServer;
  let resource: string;
  let scope: string;
  const leaksBefore = preventedLeaks.prevented;

  beforeAll(async () => {
    t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: String(DIM), ACMS_KEYWORD_INDEX: keywordIndex } });
    resource = await makeResource(t, "writer", "local/load", "corpus");
    await upsert(t, "writer", [{ resourceId: resource, documents: Array.from({ length: DOCS }, (_, i) => document(i)) }]);
    scope = await makeScope(t, "writer", { projects: ["local/load"] });
  }, 60_000);
  afterAll(async () => {
    expect(preventedLeaks.prevented).toBe(leaksBefore);
    await t.close(true);
  });

  /** Every answer's URIs, from hybrid (text + vector) and plain keyword search, as they run. */
  async function searchLoop(stop: () => boolean, seen: Array<Set<string>>): Promise<void> {
    const rag = t.client(RagService, "writer", scope);
    const text = t.client(TextBackendService, "writer", scope);
    let i = 0;
    while (!stop()) {
      const [h, s] = await Promise.all([
        rag.hybridSearch({ query: "alpha retry", embedding: embeddingOf(i++), topK: 1000, sources: [Source.TEXT, Source.VECTOR] }),
        text.search({ query: "alpha", maxResults: 1000 }),
      ]);
      expect(h.partial).toBe(false);
      seen.push(new Set(h.results.map((r) => r.ukoUri)), new Set(s.results.map((r) => r.ukoUri)));
    }
  }

  it("full and incremental rebuilds: every answer is the whole corpus, never empty, never half built", async () => {
    const baseline = chunkUris(resource, 0, DOCS);
    const index = t.client(IndexService, "writer");
    let done = false;
    const seen: Array<Set<string>> = [];
    const loops = [searchLoop(() => done, seen), searchLoop(() => done, seen), searchLoop(() => done, seen)];
    for (let round = 0; round < 6; round++) {
      await index.rebuild({ resourceIds: [resource], fullRebuild: round % 2 === 0 });
      await new Promise((r) => setTimeout(r, 20));
    }
    await index.rebuild({ resourceIds: [], fullRebuild: true });
    done = true;
    await Promise.all(loops);
    expect(seen.length).toBeGreaterThan(6);
    for (const s of seen) expect([...s].sort()).toEqual([...baseline].sort());
  }, 120_000);

  it("writes and incremental rebuilds never drop state: every answer lies between the old and the new corpus", async () => {
    const index = t.client(IndexService, "writer");
    let done = false;
    const seen: Array<Set<string>> = [];
    const loops = [searchLoop(() => done, seen), searchLoop(() => done, seen)];
    const EXTRA = 40;
    for (let k = 0; k < EXTRA; k += 5) {
      await upsert(t, "writer", [{ resourceId: resource, documents: Array.from({ length: 5 }, (_, j) => document(DOCS + k + j)) }]);
      await index.rebuild({ resourceIds: [resource], fullRebuild: false });
    }
    done = true;
    await Promise.all(loops);
    const before = chunkUris(resource, 0, DOCS);
    const after = chunkUris(resource, 0, DOCS + EXTRA);
    expect(seen.length).toBeGreaterThan(2);
    for (const s of seen) {
      for (const u of before) expect(s.has(u)).toBe(true);
      for (const u of s) expect(after.has(u)).toBe(true);
    }
    // Reads its own writes once the writer is done.
    const last = await t.client(TextBackendService, "writer", scope).search({ query: "alpha", maxResults: 1000 });
    expect(new Set(last.results.map((r) => r.ukoUri))).toEqual(after);
  }, 120_000);
});
