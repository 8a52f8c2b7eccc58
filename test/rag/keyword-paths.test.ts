import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RagService, Source } from "../../gen/acms/v1/rag_pb.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { MemoryBm25TextBackend } from "../../src/adapters/kit/bm25/memory-bm25-text-backend.js";
import { Fts5TextBackend } from "../../src/adapters/sqlite/fts5-text-backend.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { ENV, loadRagCorpus, type RagCorpus } from "./rag-fixture.js";

describe("the composition root picks the keyword path, and both rank alike through HybridSearch", () => {
  let native: TestServer;
  let memory: TestServer;
  let cn: RagCorpus;
  let cm: RagCorpus;

  beforeAll(async () => {
    native = await startTestServer({ env: ENV });
    memory = await startTestServer({ env: { ...ENV, ACMS_KEYWORD_INDEX: "memory" } });
    cn = await loadRagCorpus(native);
    cm = await loadRagCorpus(memory);
  }, 60_000);
  afterAll(async () => {
    await native.close(true);
    await memory.close(true);
  });

  it("uses FTS5 when the store has it, the in-memory BM25 index when config asks for it", async () => {
    const pick = async (env: Record<string, string>) => {
      const dir = mkdtempSync(join(tmpdir(), "acms-pick-"));
      try {
        const b = await createBackends(loadConfig({ ACMS_DATA_DIR: dir, ...env }));
        const kind = b.text instanceof Fts5TextBackend ? "fts5" : b.text instanceof MemoryBm25TextBackend ? "memory" : "other";
        await b.close();
        return kind;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    expect(await pick({})).toBe("fts5");
    expect(await pick({ ACMS_KEYWORD_INDEX: "memory" })).toBe("memory");
    expect(() => loadConfig({ ACMS_KEYWORD_INDEX: "elastic" })).toThrow(/ACMS_KEYWORD_INDEX/);
  });

  it("gives the same keyword and hybrid rankings on the same corpus", async () => {
    const local = (c: RagCorpus, uri: string) => uri.replace(c.docs, "DOCS").replace(c.notes, "NOTES").replace(c.foreign, "FOREIGN");
    for (const query of ["retry backoff", "cache entries", "failures circuit retry requests", "operations paging handbook", "secret"]) {
      for (const sources of [[Source.TEXT], []]) {
        const a = await native.client(RagService, "writer", cn.scope).hybridSearch({ query, embedding: [1, 0, 0, 0], sources });
        const b = await memory.client(RagService, "writer", cm.scope).hybridSearch({ query, embedding: [1, 0, 0, 0], sources });
        expect(b.results.map((r) => [local(cm, r.ukoUri), r.score, r.contributions.map((x) => [x.source, x.rank, x.score])])).toEqual(
          a.results.map((r) => [local(cn, r.ukoUri), r.score, r.contributions.map((x) => [x.source, x.rank, x.score])]),
        );
      }
    }
  });
});
