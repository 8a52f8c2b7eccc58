// Red team, issue 24 finding 8: PostgreSQL text cannot hold U+0000, and a NUL in `ResolveAlias.alias_or_id`
// or `RegisterResource.id` reached it and answered INTERNAL; documents with a NUL were refused on PostgreSQL
// only. Every string that can reach a store is probed here on every document engine (embedded, PostgreSQL,
// DuckDB): each answer is INVALID_ARGUMENT naming the field, the same everywhere, and nothing is written.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IndexService, type UpsertDocumentsRequest, UpsertDocumentsRequestSchema } from "../../gen/acms/v1/index_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { newUlid } from "../../src/domain/ulid-id.js";
import { badFields } from "../support/call-failure.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const NUL = "\u0000";

const ENGINES: Array<[string, (dataDir: string) => Promise<Record<string, string>>]> = [
  ["embedded", async () => ({})],
  ["PostgreSQL", async () => ({ ACMS_POSTGRES_URL: await freshPostgresDatabase() })],
  ["DuckDB", async (dataDir) => ({ ACMS_DUCKDB_PATH: join(dataDir, "nul.duckdb") })],
];

describe.each(ENGINES)("a NUL character (U+0000) is INVALID_ARGUMENT naming the field (%s)", (_engine, envOf) => {
  let t: TestServer;
  let resourceId: string;
  let scopeId: string;

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "acms-nul-"));
    t = await startTestServer({ dataDir, env: await envOf(dataDir) });
    await t.client(RegistryService, "admin").createProject({ name: "local/api" });
    resourceId = (await t.client(RegistryService, "writer").registerResource({ project: "local/api", alias: "api", kind: "repo" }))
      .resource!.id;
    scopeId = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
  });

  afterAll(async () => {
    await t?.close(true);
  });

  const registry = () => t.client(RegistryService, "writer");
  const tiers = () => t.client(ContextTierService, "writer", scopeId);

  async function upsert(msg: MessageInitShape<typeof UpsertDocumentsRequestSchema>): Promise<unknown> {
    async function* one() {
      yield msg as UpsertDocumentsRequest;
    }
    return t.client(IndexService, "writer").upsertDocuments(one());
  }

  const doc = (over: Record<string, unknown>) => ({ resourceId, documents: [{ path: "a.md", content: "alpha", metadata: {}, ...over }] });

  it.each<[string, () => Promise<unknown>, string]>([
    ["ResolveAlias alias_or_id", () => registry().resolveAlias({ project: "local/api", aliasOrId: `api${NUL}` }), "alias_or_id"],
    [
      "RegisterResource id",
      () => registry().registerResource({ project: "local/api", alias: "b", kind: "repo", id: `${newUlid().slice(0, 25)}${NUL}` }),
      "id",
    ],
    ["RegisterResource alias", () => registry().registerResource({ project: "local/api", alias: `b${NUL}`, kind: "repo" }), "alias"],
    ["RegisterResource kind", () => registry().registerResource({ project: "local/api", alias: "b", kind: `repo${NUL}` }), "kind"],
    [
      "RegisterResource metadata value",
      () => registry().registerResource({ project: "local/api", alias: "b", kind: "repo", metadata: { k: `v${NUL}` } }),
      "metadata[k]",
    ],
    [
      "RegisterResource metadata key",
      () => registry().registerResource({ project: "local/api", alias: "b", kind: "repo", metadata: { [`k${NUL}`]: "v" } }),
      `metadata[k${NUL}]`,
    ],
    ["LinkResource alias", () => registry().linkResource({ project: "local/api", resourceId, alias: `c${NUL}` }), "alias"],
    ["UpsertDocuments content", () => upsert(doc({ content: `al${NUL}pha` })), "documents[0].content"],
    ["UpsertDocuments path", () => upsert(doc({ path: `a${NUL}.md` })), "documents[0].path"],
    ["UpsertDocuments metadata", () => upsert(doc({ metadata: { k: `v${NUL}` } })), "documents[0].metadata[k]"],
    ["UpsertDocuments chunk text", () => upsert(doc({ chunks: [{ text: `al${NUL}pha`, embedding: [] }] })), "documents[0].chunks[0].text"],
    ["DeleteDocuments path", () => t.client(IndexService, "writer").deleteDocuments({ resourceId, paths: [`a${NUL}.md`] }), "paths[0]"],
    [
      "ResolveScope include_resources",
      () => t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], includeResources: [`api${NUL}`] }),
      "include_resources[0]",
    ],
    [
      "ResolveScope include_paths",
      () => t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], includePaths: [`a${NUL}`] }),
      "include_paths[0]",
    ],
    [
      "StoreFragment content",
      () => tiers().storeFragment({ fragment: { content: `x${NUL}`, tier: Tier.WARM, projectName: "local/api" } }),
      "fragment.content",
    ],
    [
      "StoreFragment metadata",
      () => tiers().storeFragment({ fragment: { content: "x", tier: Tier.WARM, projectName: "local/api", metadata: { k: `v${NUL}` } } }),
      "fragment.metadata[k]",
    ],
    [
      "StoreFragment fragment_id",
      () => tiers().storeFragment({ fragment: { fragmentId: `f${NUL}`, content: "x", tier: Tier.WARM, projectName: "local/api" } }),
      "fragment.fragment_id",
    ],
    ["GetFragment fragment_id", () => tiers().getFragment({ fragmentId: `f${NUL}` }), "fragment_id"],
  ])("%s", async (_what, call, field) => {
    expect(await badFields(call())).toEqual([field]);
  });

  it("a search query is only tokenized, never stored: a NUL in it answers OK, as on every engine", async () => {
    await expect(t.client(TextBackendService, "writer", scopeId).search({ query: `alpha${NUL}` })).resolves.toBeDefined();
    await expect(t.client(RagService, "writer", scopeId).hybridSearch({ query: `alpha${NUL}` })).resolves.toBeDefined();
  });

  it("nothing was written", async () => {
    const listed = (await registry().listResources({ project: "local/api" })).resources;
    expect(listed.map((r) => r.alias)).toEqual(["api"]);
    expect((await tiers().getMetrics({})).warmPopulation).toBe(0n);
  });
});
