import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createCommandEmbedder } from "../../src/cli/command-embedder.js";
import { chunkText } from "../../src/domain/chunking.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { runCli } from "./cli-harness.js";

const exec = promisify(execFile);
const EMBEDDER = join(__dirname, "..", "fixtures", "hashing-embedder.js");
const DIM = 16;
/** The command line of the test's embedding program, with `args` after the dimension. */
const embedCmd = (dim: number, ...args: string[]) =>
  [process.execPath, EMBEDDER, String(dim), ...args].map((a) => JSON.stringify(a)).join(" ");

let t: TestServer;
let work: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: String(DIM) } });
  work = mkdtempSync(join(tmpdir(), "acms-embed-"));
  env = { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, HOME: work };
});
afterAll(async () => {
  await t.close(true);
  rmSync(work, { recursive: true, force: true });
});

function folder(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return dir;
}

/** The test embedder's vector for `text`, written to a file for `--embedding @file`. */
async function queryVector(text: string, file: string): Promise<number[]> {
  const child = exec(process.execPath, [EMBEDDER, String(DIM)]);
  child.child.stdin!.end(`${JSON.stringify(text)}\n`);
  const vector = JSON.parse((await child).stdout.trim()) as number[];
  writeFileSync(file, JSON.stringify(vector));
  return vector;
}

/** Stderr without the progress summary a non-terminal gets (`ingest: 3/3 files, ...`). */
const errorLines = (stderr: string) => stderr.split("\n").filter((l) => l.length > 0 && !l.startsWith("ingest: "));

const ingestArgs = (dir: string, alias: string, ...more: string[]) => [
  "ingest",
  dir,
  "--project",
  "local/embed",
  "--alias",
  alias,
  "--state-file",
  join(work, `${alias}.state.json`),
  ...more,
];

describe("acms ingest --embed-command", () => {
  let scopeId: string;

  test("stores one embedding per chunk from the user's program; vector and hybrid search find the chunks", async () => {
    // One long document, so the client's chunking (the server's chunker) yields several chunks.
    const long = Array.from({ length: 120 }, (_, i) => `Paragraph ${i} about glacier ice cores and climate records.`).join("\n");
    const dir = folder("docs", {
      "fauna/quokka.md": "The quokka is a small marsupial living on Rottnest Island.",
      "kitchen/sourdough.md": "Sourdough bread rises with a wild yeast starter and slow fermentation.",
      "science/glaciers.md": long,
    });
    const run = await runCli([...ingestArgs(dir, "docs"), "--embed-command", embedCmd(DIM), "--embed-batch-size", "5", "--json"], env);
    expect(errorLines(run.stderr)).toEqual([]);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as { documentsUpserted: number; chunksIndexed: number };
    expect(summary.documentsUpserted).toBe(3);
    // Cut by the server's own chunker, so the units are the ones server-side chunking would have made.
    expect(chunkText(long).length).toBeGreaterThan(1);
    expect(summary.chunksIndexed).toBe(chunkText(long).length + 2);

    const resolved = await runCli(["scope", "resolve", "--project", "local/embed", "-q"], env);
    scopeId = resolved.stdout.trim();
    const scoped = { ...env, ACMS_SCOPE: scopeId };

    const q = join(work, "q-quokka.json");
    await queryVector("quokka marsupial on Rottnest Island", q);
    const vector = await runCli(["search", "vector", "--embedding", `@${q}`, "-k", "3", "--json"], scoped);
    expect(vector.code).toBe(0);
    const vres = JSON.parse(vector.stdout) as { results: { path: string; score: number; ukoUri: string }[] };
    expect(vres.results[0].path).toBe("fauna/quokka.md");
    expect(vres.results[0].ukoUri).toMatch(/\/fauna\/quokka\.md#0$/);
    expect(vres.results[0].score).toBeGreaterThan(0.5);

    const q2 = join(work, "q-bread.json");
    await queryVector("wild yeast sourdough starter", q2);
    const hybrid = await runCli(["search", "hybrid", "wild", "yeast", "starter", "--embedding", `@${q2}`, "--json"], scoped);
    expect(hybrid.code).toBe(0);
    const hres = JSON.parse(hybrid.stdout) as { results: { path: string; contributions: { source: string }[] }[] };
    expect(hres.results[0].path).toBe("kitchen/sourdough.md");
    expect(hres.results[0].contributions.map((c) => c.source).sort()).toEqual(["SOURCE_TEXT", "SOURCE_VECTOR"]);
  });

  test("a file sent before without embeddings counts as changed and is sent again with them", async () => {
    const dir = folder("again", { "a.md": "Tide pools hold anemones and hermit crabs." });
    const plain = await runCli([...ingestArgs(dir, "again"), "--json"], env);
    expect(JSON.parse(plain.stdout)).toMatchObject({ filesSent: 1 });
    const embedded = await runCli([...ingestArgs(dir, "again"), "--embed-command", embedCmd(DIM), "--json"], env);
    expect(JSON.parse(embedded.stdout)).toMatchObject({ filesSent: 1, filesUnchanged: 0 });
    const repeat = await runCli([...ingestArgs(dir, "again"), "--embed-command", embedCmd(DIM), "--json"], env);
    expect(JSON.parse(repeat.stdout)).toMatchObject({ filesSent: 0, filesUnchanged: 1 });
  });

  test.each([
    [
      "a dimension other than the server's",
      embedCmd(8),
      [],
      /--embed-command gives 8-dimensional embeddings, the server's dimension is 16/,
    ],
    [
      "a dimension other than --embedding-dim",
      embedCmd(8),
      ["--embedding-dim", "16"],
      /answer 1 has 8 dimensions, expected the server's dimension 16/,
    ],
    ["one answer too few", embedCmd(DIM, "--mode", "drop-one"), [], /answered 0 lines for 1 chunk texts/],
    [
      "a value that is not a finite number",
      embedCmd(DIM, "--mode", "nan"),
      [],
      /answer 1 holds a value that is not a finite number at index 0: "NaN"/,
    ],
    ["a program that fails", embedCmd(DIM, "--mode", "fail"), [], /--embed-command exited with status 3: model weights not found/],
  ])("refuses %s in one line and sends nothing", async (_what, command, extra, message) => {
    const name = `bad-${Math.random().toString(36).slice(2, 8)}`;
    const dir = folder(name, { "only.md": "A single short note." });
    const run = await runCli([...ingestArgs(dir, name), "--embed-command", command, ...extra], env);
    expect(run.code).toBe(1);
    const lines = errorLines(run.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^acms: invalid_argument: /);
    expect(lines[0]).toMatch(message);
    const scope = await runCli(["scope", "resolve", "--project", "local/embed", "-q"], env);
    const search = await runCli(["search", "text", "single", "short", "note", "--scope", scope.stdout.trim(), "--json"], env);
    expect((JSON.parse(search.stdout) as { results: { path: string }[] }).results.filter((r) => r.path === "only.md")).toEqual([]);
  });

  test("the embedder answers one vector per text, in order, and texts keep newlines and quotes intact", async () => {
    const embed = createCommandEmbedder(embedCmd(DIM));
    const [a, b, c] = await embed(["river stone", "forest cloud", 'a "quoted"\nline']);
    expect([a, b, c].map((v) => v.length)).toEqual([DIM, DIM, DIM]);
    expect(a).not.toEqual(b);
    expect(await embed(["forest cloud", "river stone"])).toEqual([b, a]);
    expect(await embed(['a "quoted"\nline'])).toEqual([c]);
  });
});
