import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IndexService, type UpsertDocumentsRequest } from "../../gen/acms/v1/index_pb.js";
import { RagService, Source } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { failure } from "../support/call-failure.js";
import { startEmbeddingsServer, withEmbeddingModel, type EmbeddingsServer } from "../support/embeddings/embedding-model.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// The server with a real embedder (all-MiniLM-L6-v2): uploads without vectors get them, SimilaritySearch takes
// text, HybridSearch embeds its query, and without an embedder `text` is FAILED_PRECONDITION. In process and
// over HTTP (the Python OpenAI-compatible server of the same model).

const DOCS = [
  { path: "ops/keys.md", content: "Rotating credentials: generate a new secret, deploy it, then revoke the old one after a grace period." },
  { path: "ops/backup.md", content: "Nightly snapshots of the database are copied to cold storage and kept for thirty days." },
  { path: "cooking/bread.md", content: "Knead the dough for ten minutes, let it rise until doubled, then bake at high heat." },
  { path: "sport/football.md", content: "The striker scored twice in the second half and the team won the championship." },
];

async function upsert(t: TestServer, resourceId: string, docs: typeof DOCS, withChunks = false) {
  async function* stream() {
    yield {
      resourceId,
      documents: docs.map((d) => ({ ...d, metadata: {}, chunks: withChunks ? [{ text: d.content, embedding: [] }] : [] })),
    } as unknown as UpsertDocumentsRequest;
  }
  return t.client(IndexService, "writer").upsertDocuments(stream());
}

async function setUp(t: TestServer): Promise<{ scopeId: string; resourceId: string }> {
  const admin = t.client(RegistryService, "admin");
  await admin.createProject({ name: "local/kb" });
  const resourceId = (await admin.registerResource({ project: "local/kb", alias: "kb", kind: "docs" })).resource!.id;
  const scopeId = (await t.client(ScopeService, "reader").resolveScope({ projects: ["local/kb"] })).scope!.scopeId;
  return { scopeId, resourceId };
}

withEmbeddingModel({ http: true }, (modelDir) => {
  describe("in process (ACMS_EMBED_MODEL_DIR)", () => {
    let t: TestServer;
    let scopeId: string;
    let resourceId: string;
    beforeAll(async () => {
      t = await startTestServer({ env: { ACMS_EMBED_MODEL_DIR: modelDir, ACMS_EMBED_THREADS: "1" } });
      ({ scopeId, resourceId } = await setUp(t));
    }, 120_000);
    afterAll(async () => t?.close(true));

    it("embeds server-chunked content and chunks sent without a vector", async () => {
      const a = await upsert(t, resourceId, DOCS.slice(0, 2));
      expect(a.vectorsIndexed).toBe(a.chunksIndexed);
      expect(a.vectorsIndexed).toBeGreaterThanOrEqual(2);
      const b = await upsert(t, resourceId, DOCS.slice(2), true);
      expect(b.vectorsIndexed).toBe(2);
    });

    it("SimilaritySearch with text finds the paraphrase that shares no keyword, unary and stream alike", async () => {
      const vec = t.client(VectorBackendService, "reader", scopeId);
      const text = "how do I change my API token safely?";
      const res = await vec.similaritySearch({ text, topK: 4 });
      expect(res.results[0].path).toBe("ops/keys.md");
      // Cosines below 0 are never returned: the unrelated documents may be left out.
      expect(res.results.length).toBeGreaterThanOrEqual(2);
      expect(res.results[0].score).toBeGreaterThan(res.results[res.results.length - 1].score + 0.2);
      const streamed: string[] = [];
      for await (const m of vec.similaritySearchStream({ text, topK: 4 })) streamed.push(m.result!.ukoUri);
      expect(streamed).toEqual(res.results.map((r) => r.ukoUri));
      // The same over gRPC.
      const grpc = t.client(VectorBackendService, "reader", scopeId, "grpc");
      expect((await grpc.similaritySearch({ text, topK: 1 })).results[0].path).toBe("ops/keys.md");
    });

    it("refuses text with embedding, and neither, naming the fields; blank text too", async () => {
      const vec = t.client(VectorBackendService, "reader", scopeId);
      const both = await failure(vec.similaritySearch({ text: "x", embedding: Array(384).fill(0.1) }));
      expect(Code[both.code]).toBe("InvalidArgument");
      expect(both.findDetails(BadRequestSchema)[0].fieldViolations.map((v) => v.field)).toEqual(["text", "embedding"]);
      const neither = await failure(vec.similaritySearch({}));
      expect(Code[neither.code]).toBe("InvalidArgument");
      expect(neither.findDetails(BadRequestSchema)[0].fieldViolations[0].field).toBe("embedding");
      const blank = await failure(vec.similaritySearch({ text: "   " }));
      expect(blank.findDetails(BadRequestSchema)[0].fieldViolations[0].field).toBe("text");
      const streamed = await failure(
        (async () => {
          for await (const _ of vec.similaritySearchStream({ text: "x", embedding: Array(384).fill(0.1) })) void _;
        })(),
      );
      expect(Code[streamed.code]).toBe("InvalidArgument");
    });

    it("HybridSearch without an embedding embeds the query: the vector source finds what keywords miss", async () => {
      const rag = t.client(RagService, "reader", scopeId);
      const res = await rag.hybridSearch({ query: "how do I change my API token safely?", topK: 3 });
      expect(res.results[0].path).toBe("ops/keys.md");
      expect(res.results[0].contributions.map((c) => c.source)).toContain(Source.VECTOR);
      const named = await rag.hybridSearch({ query: "baking loaves", sources: [Source.VECTOR], topK: 1 });
      expect(named.results[0].path).toBe("cooking/bread.md");
    });

    it("the MCP search tool's vector and hybrid modes embed the query", async () => {
      const callSearch = async (mode: string) => {
        const res = await fetch(`${t.server.url}/mcp`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${t.keys.reader}`,
            "acms-scope": scopeId,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "search", arguments: { query: "how do I change my API token safely?", mode, top_k: 1 } },
          }),
        });
        const body = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
        expect(body.result.isError ?? false).toBe(false);
        return body.result.content.map((c) => c.text).join("\n");
      };
      expect(await callSearch("vector")).toContain("ops/keys.md");
      expect(await callSearch("hybrid")).toContain("ops/keys.md");
    });

    it("keeps every search inside its scope", async () => {
      const admin = t.client(RegistryService, "admin");
      await admin.createProject({ name: "other/secret" });
      const secret = (await admin.registerResource({ project: "other/secret", alias: "s", kind: "docs" })).resource!.id;
      async function* stream() {
        yield {
          resourceId: secret,
          documents: [{ path: "s.md", content: "How to change your API token safely: the secret runbook.", metadata: {}, chunks: [] }],
        } as unknown as UpsertDocumentsRequest;
      }
      await t.client(IndexService, "other").upsertDocuments(stream());
      const res = await t.client(VectorBackendService, "reader", scopeId).similaritySearch({ text: "change API token safely", topK: 50 });
      expect(res.results.every((r) => r.resourceId === resourceId)).toBe(true);
    });
  });

  describe("without an embedder", () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer();
    });
    afterAll(async () => t?.close(true));

    it("answers text with FAILED_PRECONDITION, and HybridSearch runs without the vector source as before", async () => {
      const { scopeId, resourceId } = await setUp(t);
      const up = await upsert(t, resourceId, DOCS.slice(0, 1));
      expect(up.vectorsIndexed).toBe(0);
      const err = await failure(t.client(VectorBackendService, "reader", scopeId).similaritySearch({ text: "tokens" }));
      expect(Code[err.code]).toBe("FailedPrecondition");
      expect(err.rawMessage).toContain("no embedder configured");
      const rag = t.client(RagService, "reader", scopeId);
      const named = await failure(rag.hybridSearch({ query: "credentials", sources: [Source.VECTOR] }));
      expect(Code[named.code]).toBe("InvalidArgument");
      const res = await rag.hybridSearch({ query: "credentials" });
      expect(res.results[0].contributions.map((c) => c.source)).not.toContain(Source.VECTOR);
    });
  });

  describe("a model of another dimension", () => {
    it("stops the start with a clear error", async () => {
      const dir = mkdtempSync(join(tmpdir(), "acms-embed-dim-"));
      try {
        const config = loadConfig({ ACMS_DATA_DIR: dir, ACMS_EMBED_MODEL_DIR: modelDir, ACMS_EMBEDDING_DIM: "8" });
        await expect(createBackends(config)).rejects.toThrow(/makes 384-dimensional vectors, but ACMS_EMBEDDING_DIM is 8/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  });

  describe("over HTTP (ACMS_EMBEDDINGS_URL)", () => {
    let t: TestServer;
    let embeddings: EmbeddingsServer;
    let port: number;
    beforeAll(async () => {
      // The endpoint is down when the server starts: it serves, with vector search NOT_SERVING until it answers.
      const probe = http.createServer();
      await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
      port = (probe.address() as AddressInfo).port;
      await new Promise<void>((r) => probe.close(() => r()));
      t = await startTestServer({
        env: { ACMS_EMBEDDINGS_URL: `http://127.0.0.1:${port}/v1`, ACMS_EMBEDDINGS_MODEL: "all-minilm-l6-v2" },
      });
    }, 120_000);
    afterAll(async () => {
      await t?.close(true);
      await embeddings?.close();
    });

    it("is NOT_SERVING for vector search until the endpoint answers, then embeds; UNAVAILABLE once it is gone", async () => {
      const sessions = new Http2SessionManager(t.server.url);
      const health = createClient(Health, createGrpcTransport({ baseUrl: t.server.url, sessionManager: sessions }));
      try {
        expect((await health.check({ service: "acms.v1.VectorBackendService" })).status).toBe(ServingStatus.NOT_SERVING);
        expect((await health.check({ service: "acms.v1.TextBackendService" })).status).toBe(ServingStatus.SERVING);
        const { scopeId, resourceId } = await setUp(t);
        const down = await failure(upsert(t, resourceId, DOCS));
        expect(Code[down.code]).toBe("Unavailable");

        embeddings = await startEmbeddingsServer(modelDir, { port });
        for (;;) {
          if ((await health.check({ service: "acms.v1.VectorBackendService" })).status === ServingStatus.SERVING) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const up = await upsert(t, resourceId, DOCS);
        expect(up.vectorsIndexed).toBe(up.chunksIndexed);
        const vec = t.client(VectorBackendService, "reader", scopeId);
        expect((await vec.similaritySearch({ text: "how do I change my API token safely?", topK: 1 })).results[0].path).toBe("ops/keys.md");

        await embeddings.close();
        const gone = await failure(vec.similaritySearch({ text: "a query not cached yet" }));
        expect(Code[gone.code]).toBe("Unavailable");
        // Hybrid search goes on without its vector source (partial), as with any failing source.
        const res = await t.client(RagService, "reader", scopeId).hybridSearch({ query: "credentials rotation" });
        expect(res.partial).toBe(true);
        expect(res.results[0].path).toBe("ops/keys.md");
      } finally {
        sessions.abort();
      }
    }, 120_000);
  });
});
