import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { startTestServer } from "../../test/support/test-server.js";
import { ENV, loadRagCorpus } from "../../test/rag/rag-fixture.js";
it("leak", async () => {
  const t = await startTestServer({ env: ENV });
  const c = await loadRagCorpus(t);
  const res = await t.client(TextBackendService, "writer", c.noSecrets).search({ query: "retry secret keys backoff", maxResults: 60 });
  const { ScopeService } = await import("../../gen/acms/v1/scope_pb.js"); console.log(JSON.stringify((await t.client(ScopeService, "writer", c.noSecrets).getScope({scopeId: c.noSecrets})).scope));
  console.log(c, res.results.map((r) => r.ukoUri));
  await t.close(true);
});
