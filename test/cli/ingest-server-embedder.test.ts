import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { withEmbeddingModel } from "../support/embeddings/embedding-model.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { runCli } from "./cli-harness.js";

// "Done means" of issue 26, from the CLI: with ACMS_EMBED_MODEL_DIR on the server, `acms ingest .` (no
// --embed-command) stores vectors, and `acms search vector "..."` and hybrid search work from text alone.

withEmbeddingModel({}, (modelDir) => {
  let t: TestServer;
  let work: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startTestServer({ env: { ACMS_EMBED_MODEL_DIR: modelDir, ACMS_EMBED_THREADS: "1" } });
    work = mkdtempSync(join(tmpdir(), "acms-cli-embed-"));
    env = { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, HOME: work };
  }, 120_000);
  afterAll(async () => {
    await t?.close(true);
    if (work) rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it("ingest needs no --embed-command; search vector takes text", async () => {
    const dir = join(work, "docs");
    const files: Record<string, string> = {
      "fauna/quokka.md": "The quokka is a small marsupial living on Rottnest Island.",
      "kitchen/sourdough.md": "Sourdough bread rises with a wild yeast starter and slow fermentation.",
      "ops/keys.md": "Rotating credentials: issue a new secret, deploy it, then revoke the old one.",
    };
    for (const [p, c] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), c);
    }
    const ingest = await runCli(
      ["ingest", dir, "--project", "local/embed", "--alias", "docs", "--state-file", join(work, "state.json"), "--json"],
      env,
    );
    expect(ingest.code).toBe(0);
    const summary = JSON.parse(ingest.stdout) as { documentsUpserted: number };
    expect(summary.documentsUpserted).toBe(3);
    const scopeId = (await runCli(["scope", "resolve", "--project", "local/embed", "-q"], env)).stdout.trim();
    const scoped = { ...env, ACMS_SCOPE: scopeId };

    const vector = await runCli(["search", "vector", "a", "small", "Australian", "animal", "-k", "1", "--json"], scoped);
    expect(vector.code).toBe(0);
    expect((JSON.parse(vector.stdout) as { results: { path: string }[] }).results[0].path).toBe("fauna/quokka.md");
    const table = await runCli(["search", "vector", "how do I change an API token?", "-k", "1"], scoped);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("ops/keys.md");

    const hybrid = await runCli(["search", "hybrid", "baking", "loaves", "--json"], scoped);
    expect(hybrid.code).toBe(0);
    const h = JSON.parse(hybrid.stdout) as { results: { path: string; contributions: { source: string }[] }[] };
    expect(h.results[0].path).toBe("kitchen/sourdough.md");
    expect(h.results[0].contributions.map((c) => c.source)).toContain("SOURCE_VECTOR");

    const both = await runCli(["search", "vector", "text", "--embedding", "[1]"], scoped);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain("not both");
    const neither = await runCli(["search", "vector"], scoped);
    expect(neither.code).not.toBe(0);
  }, 120_000);
});
