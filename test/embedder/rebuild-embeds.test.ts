import { Code } from "@connectrpc/connect";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IndexService, type UpsertDocumentsRequest } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { failure } from "../support/call-failure.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { withEmbeddingModel } from "../support/embeddings/embedding-model.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// Rebuild with an embedder embeds the chunks stored before one was configured (docs/embeddings.md): a store
// written by a server without an embedder, the server restarted with the real model (all-MiniLM-L6-v2), then
// Rebuild of one resource makes vector search find that resource's documents from text, and only that
// resource's until it is rebuilt too. On the embedded engine (SQLite), PostgreSQL and DuckDB.

const DOCS = [
  { path: "ops/keys.md", content: "Rotating credentials: generate a new secret, deploy it, then revoke the old one after a grace period." },
  { path: "cooking/bread.md", content: "Knead the dough for ten minutes, let it rise until doubled, then bake at high heat." },
  { path: "sport/football.md", content: "The striker scored twice in the second half and the team won the championship." },
];
const QUERY = "how do I change my API token safely?";

async function upsert(t: TestServer, resourceId: string) {
  async function* stream() {
    yield { resourceId, documents: DOCS.map((d) => ({ ...d, metadata: {}, chunks: [] })) } as unknown as UpsertDocumentsRequest;
  }
  return t.client(IndexService, "writer").upsertDocuments(stream());
}

async function resource(t: TestServer, project: string): Promise<{ resourceId: string; scopeId: string }> {
  const admin = t.client(RegistryService, "admin");
  await admin.createProject({ name: project });
  const resourceId = (await admin.registerResource({ project, alias: "kb", kind: "docs" })).resource!.id;
  const scopeId = (await t.client(ScopeService, "reader").resolveScope({ projects: [project] })).scope!.scopeId;
  return { resourceId, scopeId };
}

const ENGINES: Array<[string, (dataDir: string) => Promise<Record<string, string>>]> = [
  ["the embedded engine (SQLite)", async () => ({})],
  ["PostgreSQL", async () => ({ ACMS_POSTGRES_URL: await freshPostgresDatabase() })],
  ["DuckDB", async (dataDir) => ({ ACMS_DUCKDB_PATH: join(dataDir, "acms.duckdb") })],
];

withEmbeddingModel({}, (modelDir) => {
  describe.each(ENGINES)("Rebuild with an embedder, on %s", (_name, engineEnv) => {
    let dataDir: string;
    let t: TestServer | undefined;
    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), "acms-rebuild-embed-"));
    });
    afterEach(async () => {
      await t?.close();
      t = undefined;
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("embeds the chunks stored before the embedder was configured, of the resources rebuilt only", async () => {
      const env = await engineEnv(dataDir);
      // Written without an embedder: no vectors.
      t = await startTestServer({ dataDir, env });
      const one = await resource(t, "local/one");
      const two = await resource(t, "local/two");
      for (const r of [one, two]) expect((await upsert(t, r.resourceId)).vectorsIndexed).toBe(0);
      const none = await failure(t.client(VectorBackendService, "reader", one.scopeId).similaritySearch({ text: QUERY, topK: 3 }));
      expect(Code[none.code]).toBe("FailedPrecondition");
      const { keyEntries, keys } = t;
      await t.close();

      // The same data, now with the model: text search by vector finds nothing until a Rebuild.
      t = await startTestServer({ dataDir, keyEntries, keys, env: { ...env, ACMS_EMBED_MODEL_DIR: modelDir, ACMS_EMBED_THREADS: "1" } });
      const vec = (scopeId: string) => (t as TestServer).client(VectorBackendService, "reader", scopeId);
      expect((await vec(one.scopeId).similaritySearch({ text: QUERY, topK: 3 })).results).toEqual([]);

      const index = t.client(IndexService, "writer");
      const rebuilt = await index.rebuild({ resourceIds: [one.resourceId], fullRebuild: false });
      expect(rebuilt.resourcesRebuilt).toBe(1);
      const found = await vec(one.scopeId).similaritySearch({ text: QUERY, topK: 3 });
      expect(found.results[0].path).toBe("ops/keys.md");
      expect(found.results.every((r) => r.resourceId === one.resourceId)).toBe(true);
      // The other resource was not rebuilt: still no vector.
      expect((await vec(two.scopeId).similaritySearch({ text: QUERY, topK: 3 })).results).toEqual([]);

      // A full Rebuild of every resource the writer owns embeds the other one too; the first keeps its vectors.
      const all = await index.rebuild({ resourceIds: [], fullRebuild: true });
      expect(all.resourcesRebuilt).toBe(2);
      expect(all.indexGeneration > rebuilt.indexGeneration).toBe(true);
      for (const r of [one, two]) {
        const res = await vec(r.scopeId).similaritySearch({ text: "baking loaves", topK: 3 });
        expect(res.results[0].path).toBe("cooking/bread.md");
        expect(res.results.every((x) => x.resourceId === r.resourceId)).toBe(true);
      }
      // A Rebuild again keeps them.
      const again = await index.rebuild({ resourceIds: [two.resourceId], fullRebuild: false });
      expect(again.resourcesRebuilt).toBe(1);
      expect((await vec(two.scopeId).similaritySearch({ text: QUERY, topK: 5 })).results.length).toBeGreaterThan(0);
    }, 180_000);
  });
});
