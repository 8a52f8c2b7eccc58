// Red team, issue 24 finding 4: keyword scores drew BM25 statistics (row count, average length, each word's row
// count) from every tenant's documents, so tenant B writing into B's own project moved tenant A's scores
// (embedded 0.743 -> 9.6e-07 once B's rows outnumbered A's and held A's word), and A could learn whether B's
// documents hold a word of A's choosing. Through the real server: A's scores on its unchanged documents are
// identical before and after B floods its own project with A's query words, or with other words.
//
// Engines: the embedded default (FTS5, per-scope statistics through the acms_fts5 extension). The PostgreSQL,
// DuckDB and in-memory-index variants belong here too once their adapters draw per-scope statistics (another
// branch of issue 24): add them to ENGINES as nul-characters.test.ts does.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IndexService, type UpsertDocumentsRequest } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const ENGINES: Array<[string, (dataDir: string) => Promise<Record<string, string>>]> = [["embedded (FTS5)", async () => ({})]];

describe.each(ENGINES)("another tenant's writes never move a tenant's keyword scores (%s)", (_engine, envOf) => {
  let t: TestServer;
  let scopeA: string;
  let scopeB: string;
  let resourceB: string;

  async function upsert(principal: string, resourceId: string, documents: Array<{ path: string; content: string }>): Promise<void> {
    async function* one() {
      yield { resourceId, documents: documents.map((d) => ({ ...d, metadata: {} })) } as unknown as UpsertDocumentsRequest;
    }
    await t.client(IndexService, principal).upsertDocuments(one());
  }

  /** A's answer to `query`: each result's URI and exact score. */
  async function scoresOfA(query: string): Promise<Array<[string, number]>> {
    const res = await t.client(TextBackendService, "writer", scopeA).search({ query, maxResults: 20 });
    return res.results.map((r) => [r.ukoUri, r.score]);
  }

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acms-bm25-scope-"));
    t = await startTestServer({ dataDir, env: await envOf(dataDir) });
    const admin = t.client(RegistryService, "admin");
    await admin.createProject({ name: "local/a" });
    await admin.createProject({ name: "other/b" });
    // Tenant A ("writer", keys for local/*) and tenant B ("other", keys for other/*): separate keys and projects.
    const resourceA = (await t.client(RegistryService, "writer").registerResource({ project: "local/a", alias: "notes", kind: "repo" }))
      .resource!.id;
    resourceB = (await t.client(RegistryService, "other").registerResource({ project: "other/b", alias: "flood", kind: "repo" })).resource!
      .id;
    scopeA = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/a"] })).scope!.scopeId;
    scopeB = (await t.client(ScopeService, "other").resolveScope({ projects: ["other/b"] })).scope!.scopeId;
    await upsert("writer", resourceA, [
      { path: "zoo/ocelot.md", content: "The ocelot is a wild cat of the Americas; ocelots hunt at night." },
      { path: "zoo/zebra.md", content: "A zebra has black and white stripes; the zebra lives in herds." },
      { path: "zoo/keeper.md", content: "The keeper feeds the zebra and the ocelot every morning before opening." },
      { path: "notes/plain.md", content: "Nothing about animals here, only a note on the opening hours." },
      { path: "notes/other.md", content: "Tickets are sold at the gate; children under six enter for free." },
    ]);
  });

  afterAll(async () => {
    await t?.close(true);
  });

  it("A's scores are identical before and after B floods its own project with A's words, then with other words", async () => {
    const queries = ["zebra ocelot", "ocelot", "keeper feeds zebra", "opening hours"];
    const before = await Promise.all(queries.map(scoresOfA));
    expect(before[0].length).toBeGreaterThanOrEqual(3);
    // B's rows outnumber A's many times and every one holds A's query words: with statistics over every tenant,
    // each word would sit in more than half the rows and its IDF would floor at 1e-6.
    const flood = Array.from({ length: 120 }, (_, i) => ({
      path: `flood/${i}.md`,
      content: `zebra ocelot keeper feeds opening hours ${"zebra ocelot ".repeat(i % 5)}`,
    }));
    await upsert("other", resourceB, flood);
    expect((await t.client(TextBackendService, "other", scopeB).search({ query: "zebra", maxResults: 5 })).results.length).toBe(5);
    const afterWords = await Promise.all(queries.map(scoresOfA));
    expect(afterWords).toEqual(before);
    // Then with long rows of other words (moving a shared average row length), and deleting some again.
    await upsert(
      "other",
      resourceB,
      Array.from({ length: 60 }, (_, i) => ({ path: `long/${i}.md`, content: `${"filler words without meaning ".repeat(40)} ${i}` })),
    );
    await t.client(IndexService, "other").deleteDocuments({ resourceId: resourceB, paths: flood.slice(0, 40).map((d) => d.path) });
    expect(await Promise.all(queries.map(scoresOfA))).toEqual(before);
  });

  it("A cannot tell whether B's documents hold a word: A's scores are the same whether they do or not", async () => {
    // A probes with a word of its own beside the word it asks about ("quokka"), before and after B writes it.
    const probe = "ocelot quokka";
    const before = await scoresOfA(probe);
    expect(before.length).toBeGreaterThan(0);
    await upsert(
      "other",
      resourceB,
      Array.from({ length: 50 }, (_, i) => ({ path: `secret/${i}.md`, content: `quokka quokka ${i}` })),
    );
    expect(await scoresOfA(probe)).toEqual(before);
    expect(await scoresOfA("quokka")).toEqual([]);
  });
});
