// Red team, issue 24 finding 4: keyword scores used BM25 statistics (row count, average length, each word's
// row count) over every tenant's documents, so tenant B writing into B's own project moved tenant A's score on
// A's unchanged document (PostgreSQL 0.889 -> 0.841): B could push A's results down, and A could learn whether
// B's documents hold a word of A's choosing. Through the real server on PostgreSQL, on DuckDB and on the
// in-memory keyword index (ACMS_KEYWORD_INDEX=memory): A's scores stay identical, to the last bit, however B
// floods its own project. (The embedded FTS5 engine has its own file.)
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IndexService, type UpsertDocumentsRequest } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const ENGINES: Array<[string, (dataDir: string) => Promise<Record<string, string>>]> = [
  ["PostgreSQL", async () => ({ ACMS_POSTGRES_URL: await freshPostgresDatabase() })],
  ["DuckDB", async (dataDir) => ({ ACMS_DUCKDB_PATH: join(dataDir, "bm25.duckdb") })],
  ["embedded, in-memory keyword index", async () => ({ ACMS_KEYWORD_INDEX: "memory" })],
];

/** Tenant A's documents: the query word is in some, at different densities. */
const A_DOCS = [
  { path: "notes/deploy.md", text: "the release pipeline runs canary checks before the rollout" },
  { path: "notes/canary.md", text: "canary canary: a small share of traffic sees the new build first" },
  { path: "notes/other.md", text: "an unrelated note about lunch orders and meeting rooms" },
  { path: "notes/long.md", text: `${"background material ".repeat(20)} with one canary mention` },
];
const QUERY = "canary rollout";

describe.each(ENGINES)("another tenant's writes never move a keyword score (%s)", (_engine, envOf) => {
  let t: TestServer;
  let aScope: string;
  let bResource: string;
  let bScope: string;

  async function upsert(principal: string, resourceId: string, docs: ReadonlyArray<{ path: string; text: string }>): Promise<void> {
    async function* one() {
      yield {
        resourceId,
        documents: docs.map((d) => ({ path: d.path, content: d.text, metadata: {}, chunks: [{ text: d.text, embedding: [] }] })),
      } as unknown as UpsertDocumentsRequest;
    }
    await t.client(IndexService, principal).upsertDocuments(one());
  }

  /** Tenant A's answer as (uri, score) pairs. */
  async function aScores(): Promise<Array<[string, number]>> {
    const res = await t.client(TextBackendService, "writer", aScope).search({ query: QUERY, maxResults: 50 });
    return res.results.map((r) => [r.ukoUri, r.score]);
  }

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acms-bm25-scope-"));
    t = await startTestServer({ dataDir, env: await envOf(dataDir) });
    await t.client(RegistryService, "admin").createProject({ name: "local/app" });
    await t.client(RegistryService, "admin").createProject({ name: "other/flood" });
    const aResource = (await t.client(RegistryService, "writer").registerResource({ project: "local/app", alias: "app", kind: "repo" }))
      .resource!.id;
    bResource = (await t.client(RegistryService, "other").registerResource({ project: "other/flood", alias: "flood", kind: "repo" }))
      .resource!.id;
    await upsert("writer", aResource, A_DOCS);
    aScope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/app"] })).scope!.scopeId;
    bScope = (await t.client(ScopeService, "other").resolveScope({ projects: ["other/flood"] })).scope!.scopeId;
  });

  afterAll(async () => {
    await t?.close(true);
  });

  it("A's scores on its unchanged documents are identical before and after B floods its own project with A's query words", async () => {
    const before = await aScores();
    expect(before.length).toBe(3);
    // B writes many more rows than A holds: with shared statistics every IDF of A's words would drop to
    // the floor (A's scores collapse); the short and long rows move the shared average length too.
    for (let round = 0; round < 3; round++) {
      await upsert(
        "other",
        bResource,
        Array.from({ length: 20 }, (_, i) => ({
          path: `flood/${round}-${i}.md`,
          text: i % 2 === 0 ? "canary rollout canary rollout" : `zzz ${"filler ".repeat(40)}`,
        })),
      );
      expect(await aScores()).toEqual(before);
    }
    // B's documents are indexed and B finds them: the flood landed, yet A saw nothing of it.
    const b = await t.client(TextBackendService, "other", bScope).search({ query: QUERY, maxResults: 100 });
    expect(b.results.length).toBe(30);
    expect(b.results.every((r) => r.ukoUri.startsWith(`uko://${bResource}/`))).toBe(true);
  });

  it("whether B's documents hold a word is invisible to A: A's score for a word B alone writes stays the same", async () => {
    const probe = "pipeline lunch";
    const score = async () =>
      (await t.client(TextBackendService, "writer", aScope).search({ query: probe, maxResults: 10 })).results.map((r) => [
        r.ukoUri,
        r.score,
      ]);
    const before = await score();
    expect(before.length).toBe(2);
    await upsert("other", bResource, [{ path: "secret/plan.md", text: "pipeline pipeline pipeline merger plan" }]);
    expect(await score()).toEqual(before);
  });
});
