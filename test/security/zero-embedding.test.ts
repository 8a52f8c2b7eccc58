// Red team, issue 24 finding 9: through Connect JSON an embedding travels as doubles, so `1e-50` reached the
// server as a non-zero number that float32 (the precision vectors are kept and compared in) holds as 0.
// Validation judged the doubles: search answered OK and empty, and UpsertDocuments stored the zero vector.
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { IndexService, type UpsertDocumentsRequest } from "../../gen/acms/v1/index_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { badFields } from "../support/call-failure.js";
import { authInterceptor, startTestServer, type TestServer } from "../support/test-server.js";

const DIM = 4;
/** Non-zero doubles that are all 0 in float32. */
const UNDERFLOWS = [1e-50, 0, -1e-46, 0];

let t: TestServer;
let resourceId: string;
let scopeId: string;
const sessions: Http2SessionManager[] = [];

/** A client speaking Connect with JSON bodies, where numbers travel as doubles. */
function jsonClient<S extends DescService>(service: S, principal: string, scope?: string): Client<S> {
  const sessionManager = new Http2SessionManager(t.server.url);
  sessions.push(sessionManager);
  return createClient(
    service,
    createConnectTransport({
      baseUrl: t.server.url,
      httpVersion: "2",
      sessionManager,
      useBinaryFormat: false,
      interceptors: [authInterceptor(t.keys[principal], scope)],
    }),
  );
}

async function upsert(embedding: number[]): Promise<unknown> {
  async function* messages() {
    yield {
      resourceId,
      documents: [{ path: "a.md", content: "alpha", metadata: {}, chunks: [{ text: "alpha", embedding }] }],
    } as unknown as UpsertDocumentsRequest;
  }
  return jsonClient(IndexService, "writer").upsertDocuments(messages());
}

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: String(DIM) } });
  await t.client(RegistryService, "admin").createProject({ name: "local/api" });
  resourceId = (await t.client(RegistryService, "writer").registerResource({ project: "local/api", alias: "api", kind: "repo" })).resource!
    .id;
  await upsert([1, 0, 0, 0]);
  scopeId = (await t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
});

afterAll(async () => {
  for (const s of sessions) s.abort();
  await t?.close(true);
});

describe("an embedding that is zero in float32 is refused, naming the field", () => {
  it("SimilaritySearch", async () => {
    const embedding = UNDERFLOWS;
    expect(await badFields(jsonClient(VectorBackendService, "reader", scopeId).similaritySearch({ embedding }))).toEqual(["embedding"]);
  });

  it("HybridSearch", async () => {
    const embedding = UNDERFLOWS;
    expect(await badFields(jsonClient(RagService, "reader", scopeId).hybridSearch({ query: "alpha", embedding }))).toEqual(["embedding"]);
  });

  it("UpsertDocuments, and nothing is stored", async () => {
    const embedding = UNDERFLOWS;
    const before = (await t.client(VectorBackendService, "reader", scopeId).similaritySearch({ embedding: [1, 0, 0, 0] })).results;
    expect(await badFields(upsert(embedding))).toEqual(["documents[0].chunks[0].embedding"]);
    const after = (await t.client(VectorBackendService, "reader", scopeId).similaritySearch({ embedding: [1, 0, 0, 0] })).results;
    expect(after).toEqual(before);
  });

  it("a tiny embedding that float32 holds is still searched", async () => {
    const { results } = await jsonClient(VectorBackendService, "reader", scopeId).similaritySearch({ embedding: [1e-30, 0, 0, 0] });
    expect(results.map((r) => r.path)).toEqual(["a.md"]);
  });
});
