/**
 * The MCP `search` tool's `include_paths` narrows the scope inside the RPC's own access check, so every engine
 * applies it in its query: in each mode (text, vector with a real embedder, hybrid) the tool answers exactly
 * what the same RPC answers under a scope resolved with those include_paths (same hits, scores, order and
 * `exhaustive`), and no glob (`**`, another tenant's paths) shows anything outside the connection's scope,
 * whose own include and exclude lists still apply. Runs on every engine of the isolation projects (embedded,
 * PostgreSQL, DuckDB).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { ensureProject } from "../support/ensure-project.js";
import { withEmbeddingModel } from "../support/embeddings/embedding-model.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { call, connectMcp, ok } from "../mcp/mcp-client.js";

type Mode = "text" | "vector" | "hybrid";
interface Answer {
  results: { uko_uri: string; score: number }[];
  exhaustive: boolean;
}

const WRITER_DOCS = [
  { path: "guide/intro.md", content: "zebra introduction: the api serves striped answers to every caller" },
  { path: "guide/setup.md", content: "zebra setup: install the service and configure its keys" },
  { path: "guide/deep/faq.md", content: "zebra questions: why are the stripes black and white, and how to search" },
  { path: "notes/todo.txt", content: "zebra todo: write the release notes and search the backlog" },
];
const WRITER_CODE = [
  { path: "src/main.ts", content: "export const zebra = 'main entry point that starts the striped server';" },
  { path: "src/util/zebra.ts", content: "export function stripes(zebra: number) { return zebra * 2; } // search helper" },
  { path: "README.md", content: "zebra readme: how to install, configure and search the api" },
];
/** The other tenant's documents: the same paths as the writer's, and words of their own. */
const OTHER_DOCS = [
  { path: "guide/intro.md", content: "zebra vault: the other tenant's secret launch codes" },
  { path: "vault.md", content: "zebra vault: the other tenant's secret launch codes, again" },
];

const QUERY = "zebra stripes search install";

async function* one<T>(m: T): AsyncIterable<T> {
  yield m;
}

withEmbeddingModel({}, (modelDir) => {
  let t: TestServer;
  let scope: string;
  let mcp: Client;
  let docs: string;
  let secret: string;

  beforeAll(async () => {
    t = await startTestServer({ env: { ACMS_EMBED_MODEL_DIR: modelDir, ACMS_EMBED_THREADS: "1" } });
    await ensureProject(t, "writer", "local/api");
    await ensureProject(t, "other", "other/secret");
    const reg = (p: string) => t.client(RegistryService, p);
    docs = (await reg("writer").registerResource({ project: "local/api", alias: "docs", kind: "docs" })).resource!.id;
    const code = (await reg("writer").registerResource({ project: "local/api", alias: "code", kind: "repo" })).resource!.id;
    secret = (await reg("other").registerResource({ project: "other/secret", alias: "vault", kind: "docs" })).resource!.id;
    const upsert = (p: string, resourceId: string, documents: { path: string; content: string }[]) =>
      t.client(IndexService, p).upsertDocuments(one({ resourceId, documents }));
    await upsert("writer", docs, WRITER_DOCS);
    await upsert("writer", code, WRITER_CODE);
    await upsert("other", secret, OTHER_DOCS);
    scope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    mcp = await connectMcp(t.server.url, t.keys.writer, scope);
  }, 180_000);

  afterAll(async () => {
    await mcp?.close();
    await t?.close(true);
  });

  /** The RPC a mode maps to, under `scopeId`, as the tool would answer it (uri, score, exhaustive). */
  async function rpc(mode: Mode, scopeId: string, topK: number): Promise<Answer> {
    const pick = (res: { results: { ukoUri: string; score: number }[]; exhaustive: boolean }): Answer => ({
      results: res.results.map((r) => ({ uko_uri: r.ukoUri, score: r.score })),
      exhaustive: res.exhaustive,
    });
    if (mode === "text") return pick(await t.client(TextBackendService, "writer", scopeId).search({ query: QUERY, maxResults: topK }));
    if (mode === "vector") return pick(await t.client(VectorBackendService, "writer", scopeId).similaritySearch({ text: QUERY, topK }));
    return pick(await t.client(RagService, "writer", scopeId).hybridSearch({ query: QUERY, topK }));
  }

  /** The tool's answer, reduced to what `rpc` answers. */
  async function tool(client: Client, mode: Mode, includePaths: string[], topK: number, scopeId?: string): Promise<Answer> {
    const args = { query: QUERY, mode, top_k: topK, include_paths: includePaths, ...(scopeId ? { scope_id: scopeId } : {}) };
    const a = ok<Answer>(await call(client, "search", args));
    return { results: a.results.map((r) => ({ uko_uri: r.uko_uri, score: r.score })), exhaustive: a.exhaustive };
  }

  const GLOB_SETS = [["guide/**"], ["src/**", "guide/setup.md"], ["**/*.md"], ["notes/*.txt", "README.md"], ["nothing/**"]];

  test.each(["text", "vector", "hybrid"] as Mode[])(
    "%s: include_paths answers exactly what a scope resolved with those include_paths answers (hits, scores, exhaustive)",
    async (mode) => {
      for (const includePaths of GLOB_SETS) {
        const resolved = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"], includePaths })).scope!.scopeId;
        for (const topK of [1, 2, 3, 20]) {
          const expected = await rpc(mode, resolved, topK);
          const got = await tool(mcp, mode, includePaths, topK);
          expect({ includePaths, topK, got }).toEqual({ includePaths, topK, got: expected });
        }
        // The filter is real: every hit's path matches, and a cut answer says it was cut.
        const all = await rpc(mode, resolved, 20);
        if (includePaths[0] === "nothing/**") expect(all.results).toEqual([]);
      }
      // Without include_paths, the whole scope: more than any one glob set shows.
      const whole = await tool(mcp, mode, [], 20);
      expect(whole.results.length).toBeGreaterThan((await tool(mcp, mode, ["guide/**"], 20)).results.length);
    },
  );

  test("exhaustive tells the truth: a cut answer says false, a complete one true", async () => {
    const cut = await tool(mcp, "text", ["guide/**"], 1);
    expect(cut.results).toHaveLength(1);
    expect(cut.exhaustive).toBe(false);
    const complete = await tool(mcp, "text", ["guide/**"], 50);
    expect(complete.results.map((r) => r.uko_uri.replace(/#\d+$/, "")).sort()).toEqual(
      WRITER_DOCS.filter((d) => d.path.startsWith("guide/"))
        .map((d) => `uko://${docs}/${d.path}`)
        .sort(),
    );
    expect(complete.exhaustive).toBe(true);
  });

  test("a glob cannot escape the scope: `**` and another tenant's paths see only the scope's documents", async () => {
    for (const mode of ["text", "vector", "hybrid"] as Mode[]) {
      const everything = await tool(mcp, mode, ["**"], 50);
      expect(everything).toEqual(await tool(mcp, mode, [], 50));
      const theirs = await tool(mcp, mode, ["vault.md", "**/vault.md", "guide/intro.md"], 50);
      const owners = new Set(theirs.results.map((r) => r.uko_uri.slice("uko://".length, "uko://".length + 26)));
      expect(owners).toEqual(new Set([docs]));
      expect(JSON.stringify(theirs)).not.toContain(secret);
      expect(theirs.results.map((r) => r.uko_uri.replace(/#\d+$/, ""))).toEqual([`uko://${docs}/guide/intro.md`]);
    }
  });

  test("the scope's own include and exclude lists still apply: include_paths only intersects them", async () => {
    // A connection scope of guide/** without guide/setup.md.
    const narrow = (
      await t
        .client(ScopeService, "writer")
        .resolveScope({ projects: ["local/api"], includePaths: ["guide/**"], excludePaths: ["guide/setup.md"] })
    ).scope!.scopeId;
    const narrowMcp = await connectMcp(t.server.url, t.keys.writer, narrow);
    try {
      for (const mode of ["text", "vector", "hybrid"] as Mode[]) {
        const paths = async (include: string[]) =>
          new Set(
            (await tool(narrowMcp, mode, include, 50)).results.map((r) => r.uko_uri.replace(/^uko:\/\/[^/]+\//, "").replace(/#\d+$/, "")),
          );
        expect(await paths(["**"])).toEqual(new Set(["guide/intro.md", "guide/deep/faq.md"]));
        expect(await paths(["guide/setup.md"])).toEqual(new Set());
        expect(await paths(["src/**", "README.md"])).toEqual(new Set());
        expect(await paths(["guide/deep/**"])).toEqual(new Set(["guide/deep/faq.md"]));
      }
      // Through a scope narrowed from the connection's (scope_id): the child's exclude applies too.
      const child = ok<{ scope_id: string }>(await call(narrowMcp, "narrow_scope", { exclude_paths: ["guide/deep/**"] })).scope_id;
      const viaChild = await tool(narrowMcp, "text", ["**"], 50, child);
      expect(viaChild.results.map((r) => r.uko_uri.replace(/#\d+$/, ""))).toEqual([`uko://${docs}/guide/intro.md`]);
    } finally {
      await narrowMcp.close();
    }
  });

  test("include_paths globs are checked as ResolveScope checks a scope's: a bad glob or too many is INVALID_ARGUMENT naming the argument", async () => {
    const bad = await call(mcp, "search", { query: QUERY, mode: "text", include_paths: ["guide/**", "../etc/passwd"] });
    expect(bad.structuredContent).toMatchObject({
      code: "INVALID_ARGUMENT",
      field_violations: [expect.objectContaining({ field: "include_paths[1]" })],
    });
    const many = await call(mcp, "search", {
      query: QUERY,
      mode: "hybrid",
      include_paths: Array.from({ length: 600 }, (_, i) => `d${i}/**`),
    });
    expect(many.structuredContent).toMatchObject({
      code: "INVALID_ARGUMENT",
      field_violations: [expect.objectContaining({ field: "include_paths" })],
    });
    const costly = await call(mcp, "search", {
      query: QUERY,
      mode: "vector",
      // 50 globs of 1,000 characters: about 50,000 automaton states, past the scope budget of 40,000.
      include_paths: Array.from({ length: 50 }, (_, i) => `d${String(i).padStart(3, "0")}/${"a".repeat(990)}`),
    });
    expect(costly.structuredContent).toMatchObject({
      code: "INVALID_ARGUMENT",
      field_violations: [expect.objectContaining({ field: "include_paths" })],
    });
    expect(JSON.stringify(costly.structuredContent)).toContain("automaton states");
  });
});
