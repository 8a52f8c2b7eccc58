import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// Two servers on one PostgreSQL database: a link removed through one must leave the scopes the other has
// cached views of (its views are rebuilt on the NOTIFY the removal commits).

jest.setTimeout(120_000);

let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  const url = await freshPostgresDatabase();
  a = await startTestServer({ env: { ACMS_POSTGRES_URL: url, ACMS_EMBEDDING_DIM: "4" } });
  b = await startTestServer({ env: { ACMS_POSTGRES_URL: url, ACMS_EMBEDDING_DIM: "4" }, keyEntries: a.keyEntries, keys: a.keys });
});

afterAll(async () => {
  await b?.close(true);
  await a?.close(true);
});

async function* one<T>(m: T): AsyncIterable<T> {
  yield m;
}

test("a scope whose view another server cached stops seeing a resource unlinked through this one", async () => {
  const reg = a.client(RegistryService, "writer");
  await reg.createProject({ name: "local/owner" });
  await reg.createProject({ name: "local/borrower" });
  const id = (await reg.registerResource({ project: "local/owner", alias: "doc", kind: "docs" })).resource!.id;
  await a
    .client(IndexService, "writer")
    .upsertDocuments(one({ resourceId: id, documents: [{ path: "a.md", content: "quokkamarker lives here" }] }));
  await reg.linkResource({ project: "local/borrower", resourceId: id, alias: "lent" });
  const { scope } = await a.client(ScopeService, "writer").resolveScope({ projects: ["local/borrower"] });
  // What b's view holds: ValidateResourceScope answers from the view's resource set alone.
  const searchOn = async (t: TestServer) => {
    const inView = await t
      .client(ScopeService, "writer", scope!.scopeId)
      .validateResourceScope({ requestedResourceIds: [id] })
      .then(
        () => true,
        () => false,
      );
    const { results } = await t.client(TextBackendService, "writer", scope!.scopeId).search({ query: "quokkamarker" });
    return { results: inView ? results : [], inView };
  };
  // Server b builds and caches the scope's view.
  expect((await searchOn(b)).results.map((r) => r.resourceId)).toEqual([id]);
  await reg.unlinkResource({ project: "local/borrower", resourceId: id });
  expect((await searchOn(a)).results).toEqual([]);
  // The NOTIFY reaches b asynchronously: wait for it (bounded by attempts, not by time).
  let results = (await searchOn(b)).results;
  for (let i = 0; i < 200 && results.length > 0; i++) {
    await new Promise((r) => setImmediate(r));
    results = (await searchOn(b)).results;
  }
  expect(results).toEqual([]);
});
