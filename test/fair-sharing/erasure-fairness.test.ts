import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { resolve } from "../isolation/isolation-fixture.js";

// A large DeleteResource runs in slices on the indexer's write section: while it runs, another tenant's search
// and health are answered (ordering, not time: each answers before the erasure does).

const CHUNKS = 20_000;
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4" } });
}, 60_000);

afterAll(async () => {
  await t?.close(true);
});

it("answers another tenant's searches and health while a DeleteResource of 20,000 chunks runs", async () => {
  const reg = t.client(RegistryService, "writer");
  await reg.createProject({ name: "local/big" });
  await t.client(RegistryService, "other").createProject({ name: "other/small" });
  const big = (await reg.registerResource({ project: "local/big", alias: "big", kind: "repo" })).resource!.id;
  const small = (await t.client(RegistryService, "other").registerResource({ project: "other/small", alias: "s", kind: "repo" })).resource!
    .id;
  const { IndexService } = await import("../../gen/acms/v1/index_pb.js");
  for (let from = 0; from < CHUNKS; from += 2500) {
    await t.client(IndexService, "writer").upsertDocuments(
      (async function* () {
        for (let m = from; m < from + 2500; m += 500) {
          const documents = [];
          for (let i = m; i < m + 500; i++)
            documents.push({
              path: `d/${i}.md`,
              content: `big ${i}`,
              metadata: {},
              chunks: [{ text: `big ${i}`, embedding: [1, i % 5, 0, 0] }],
            });
          yield { resourceId: big, documents };
        }
      })(),
    );
  }
  await t.client(IndexService, "other").upsertDocuments(
    (async function* () {
      yield { resourceId: small, documents: [{ path: "s.md", content: "zebra small", metadata: {}, chunks: [{ text: "zebra small" }] }] };
    })(),
  );
  const scope = await resolve(t, "other", { projects: ["other/small"] });
  const events: string[] = [];
  const erasure = reg.deleteResource({ resourceId: big }).then((r) => {
    events.push("erased");
    return r;
  });
  // Started once the erasure has begun (the resource has left the listing: the intent is committed).
  for (;;) {
    const { resources } = await reg.listResources({ project: "local/big" });
    if (resources.length === 0) break;
  }
  const search = t
    .client(TextBackendService, "other", scope.scopeId)
    .search({ query: "zebra", maxResults: 5 })
    .then((r) => {
      events.push("search");
      return r;
    });
  const health = t
    .client(Health)
    .check({})
    .then(() => events.push("health"));
  const [found, report] = await Promise.all([search, erasure, health]).then(([s, e]) => [s, e] as const);
  expect(found.results.map((r) => r.resourceId)).toEqual([small]);
  expect(Number(report.report!.chunks)).toBe(CHUNKS);
  expect(events.indexOf("search")).toBeLessThan(events.indexOf("erased"));
  expect(events.indexOf("health")).toBeLessThan(events.indexOf("erased"));
}, 300_000);
