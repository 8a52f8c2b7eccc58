import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { expectCode } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { doc, makeResource, makeScope, upsert } from "../index/index-fixture.js";
import { ENV } from "./rag-fixture.js";

describe("FetchContent and versions", () => {
  let t: TestServer;
  let res: string;
  beforeAll(async () => {
    t = await startTestServer({ env: ENV });
    res = await makeResource(t, "writer", "local/fetch", "docs");
  }, 60_000);
  afterAll(async () => {
    await t.close(true);
  });

  it("answers the scope's version: current sees the live one, recent and all also what was deleted", async () => {
    await upsert(t, "writer", [{ resourceId: res, documents: [doc("v.md", "first version"), doc("gone.md", "soon deleted")] }]);
    await upsert(t, "writer", [{ resourceId: res, documents: [doc("v.md", "second version")] }]);
    await t.client(IndexService, "writer").deleteDocuments({ resourceId: res, paths: ["gone.md"] });
    const current = await makeScope(t, "writer", { projects: ["local/fetch"] });
    const recent = await makeScope(t, "writer", { projects: ["local/fetch"], temporalScope: "recent" });
    const all = await makeScope(t, "writer", { projects: ["local/fetch"], temporalScope: "all" });
    const uris = [`uko://${res}/v.md`, `uko://${res}/gone.md`, `uko://${res}/gone.md#0`];
    const now = await t.client(RagService, "writer", current).fetchContent({ ukoUris: uris });
    expect(now.items.map((i) => i.content)).toEqual(["second version"]);
    expect(now.missing).toEqual(uris.slice(1));
    for (const scope of [recent, all]) {
      const r = await t.client(RagService, "writer", scope).fetchContent({ ukoUris: uris });
      expect(r.items.map((i) => [i.ukoUri, i.content])).toEqual([
        [uris[0], "second version"],
        [uris[1], "soon deleted"],
        [uris[2], "soon deleted"],
      ]);
      expect(r.missing).toEqual([]);
    }
  });

  it("one large document named many times is refused from its stored size, never assembled, while health answers", async () => {
    const big = "large words of a document ".repeat(120_000); // about 3 MB
    await upsert(t, "writer", [{ resourceId: res, documents: [doc("big.md", big)] }]);
    const scope = await makeScope(t, "writer", { projects: ["local/fetch"] });
    const rag = t.client(RagService, "writer", scope);
    const uri = `uko://${res}/big.md`;
    // Once is within the message limit and answers the whole document.
    expect((await rag.fetchContent({ ukoUris: [uri] })).items.map((i) => i.content.length)).toEqual([big.length]);
    const sessionManager = new Http2SessionManager(t.server.url);
    try {
      const health = createClient(Health, createGrpcTransport({ baseUrl: t.server.url, sessionManager }));
      const many = Array.from({ length: t.config.maxResultsCap }, () => uri);
      const [refused, healthy] = await Promise.all([
        expectCode(rag.fetchContent({ ukoUris: many }), Code.InvalidArgument),
        health.check({ service: "" }),
      ]);
      expect(refused.rawMessage).toContain("uko_uris");
      expect(refused.rawMessage).toMatch(/message limit/);
      expect(healthy.status).toBe(ServingStatus.SERVING);
    } finally {
      sessionManager.abort();
    }
  });

  it("refuses more URIs than the cap and calls without a scope", async () => {
    const scope = await makeScope(t, "writer", { projects: ["local/fetch"] });
    const many = Array.from({ length: t.config.maxResultsCap + 1 }, (_, i) => `uko://${res}/f${i}.md`);
    const err = await expectCode(t.client(RagService, "writer", scope).fetchContent({ ukoUris: many }), Code.InvalidArgument);
    expect(err.rawMessage).toContain("uko_uris");
    await expectCode(t.client(RagService, "writer").fetchContent({ ukoUris: [`uko://${res}/v.md`] }), Code.FailedPrecondition);
    await expectCode(t.client(RagService, "nobody", scope).fetchContent({ ukoUris: [`uko://${res}/v.md`] }), Code.Unauthenticated);
  });
});
