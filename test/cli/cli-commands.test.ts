import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createHash } from "node:crypto";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { createAcmsClient } from "../../src/client/create-acms-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { doc, upsert } from "../index/index-fixture.js";
import { runCli } from "./cli-harness.js";

const exec = promisify(execFile);
const ROOT = join(__dirname, "..", "..");

let t: TestServer;
let work: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestServer();
  work = mkdtempSync(join(tmpdir(), "acms-cli-"));
  env = { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, XDG_CACHE_HOME: join(work, "cache"), HOME: work };
});
afterAll(async () => {
  await t.close(true);
  rmSync(work, { recursive: true, force: true });
});

/** Exactly one line on stderr, `acms: <code>: ...`, and no stack trace. */
function expectOneErrorLine(stderr: string, code: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^acms: ${code}: `));
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0];
}

function makeDocsFolder(dir: string): void {
  const write = (rel: string, content: string | Buffer) => {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), content);
  };
  for (let i = 0; i < 2000; i++) {
    write(`notes/part-${i % 20}/note-${i}.md`, `# Note ${i}\n\nRoutine entry number ${i} about weekly status and follow-ups.\n`);
  }
  write("guide/flux-capacitor.md", "# Flux capacitor\n\nThe flux capacitor calibration procedure needs 1.21 gigawatts.\n");
  write(".gitignore", "build/\n*.log\n!keep.log\nnode_modules/\n");
  write("build/out.md", "generated flux capacitor output\n");
  write("node_modules/pkg/readme.md", "dependency readme\n");
  write("debug.log", "ignored log\n");
  write("keep.log", "this log is kept on purpose\n");
  write("sub/.gitignore", "secret.md\n");
  write("sub/secret.md", "hidden by a nested gitignore\n");
  write("sub/visible.md", "visible next to the secret\n");
  write(".git/HEAD", "ref: refs/heads/main\n");
  for (let i = 0; i < 5; i++) write(`img/pic-${i}.png`, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, i]));
  for (let i = 0; i < 3; i++) write(`data/huge-${i}.txt`, "x".repeat(300_000));
  write("drafts/wip.md", "excluded by a glob\n");
  write("odd#name.md", "a name that cannot be a document path\n");
}

describe("acms keys", () => {
  test("create prints a key once, stores only its hash, and list never shows keys", async () => {
    const file = join(work, "keys", "keys.json");
    const created = await runCli(["keys", "create", "--name", "agent-a", "--projects", "local/*", "--file", file], env);
    expect(created.code).toBe(0);
    const key = /key \(shown once, store it now\): (acms_[A-Za-z0-9_-]{43})/.exec(created.stdout)?.[1];
    expect(key).toBeDefined();
    const entries = JSON.parse(readFileSync(file, "utf8"));
    expect(entries).toEqual([
      { name: "agent-a", key_sha256: createHash("sha256").update(key!).digest("hex"), projects: ["local/*"], write: false },
    ]);
    expect(readFileSync(file, "utf8")).not.toContain(key!);

    const second = await runCli(
      ["keys", "create", "--name", "ci", "--projects", "local/*,other/x", "--write", "--file", file, "--json"],
      env,
    );
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ name: "ci", projects: ["local/*", "other/x"], write: true });

    const listed = await runCli(["keys", "list", "--file", file], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/agent-a\s+read-only\s+local\/\*/);
    expect(listed.stdout).toMatch(/ci\s+read-write\s+local\/\*, other\/x/);
    expect(listed.stdout).not.toMatch(/acms_/);

    const dup = await runCli(["keys", "create", "--name", "agent-a", "--projects", "local/*", "--file", file], env);
    expect(dup.code).toBe(1);
    expectOneErrorLine(dup.stderr, "invalid_argument");
    expect(JSON.parse(readFileSync(file, "utf8"))).toHaveLength(2);

    const badGlob = await runCli(["keys", "create", "--name", "x", "--projects", "/etc", "--file", file], env);
    expect(badGlob.code).toBe(1);
    expectOneErrorLine(badGlob.stderr, "invalid_argument");
  });

  test("the default keys file follows ACMS_KEYS_FILE", async () => {
    const file = join(work, "env-keys.json");
    const run = await runCli(["keys", "create", "--name", "n1", "--projects", "local/*"], { ...env, ACMS_KEYS_FILE: file });
    expect(run.code).toBe(0);
    expect(existsSync(file)).toBe(true);
  });
});

describe("acms ingest, scope, search, fetch, tiers on a folder of 2000 files", () => {
  let docs: string;
  let resourceId: string;
  let scopeId: string;

  beforeAll(() => {
    docs = join(work, "docs");
    makeDocsFolder(docs);
  });

  test("ingest walks with .gitignore and globs, skips binary and huge files with counts", async () => {
    const run = await runCli(
      ["ingest", docs, "--project", "local/cli", "--alias", "docs", "--exclude", "drafts/**", "--max-file-bytes", "100000", "--json"],
      env,
    );
    expect(run.stderr).not.toMatch(/^acms: /m);
    expect(run.code).toBe(0);
    const s = JSON.parse(run.stdout);
    // 2000 notes + flux-capacitor + keep.log + sub/visible.md + .gitignore + sub/.gitignore, 5 binary, 3 huge.
    expect(s).toMatchObject({
      project: "local/cli",
      alias: "docs",
      createdProject: true,
      createdResource: true,
      filesFound: 2000 + 5 + 5 + 3,
      filesSent: 2005,
      filesUnchanged: 0,
      skippedBinary: 5,
      skippedTooLarge: 3,
      skippedBadName: 1,
      documentsUpserted: 2005,
      interrupted: false,
    });
    expect(s.chunksIndexed).toBeGreaterThanOrEqual(2005);
    resourceId = s.resourceId;
    // Progress went to stderr as plain lines (not a TTY), ending with the final count.
    expect(run.stderr).toMatch(/ingest: 2010\/2010 files, \d+ chunks, \d+ files\/s/);
  }, 90_000);

  test("a second run sends nothing: every file is unchanged", async () => {
    const run = await runCli(
      ["ingest", docs, "--project", "local/cli", "--alias", "docs", "--exclude", "drafts/**", "--max-file-bytes", "100000"],
      env,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`ingested ${docs} into local/cli:docs (resource ${resourceId})`);
    expect(run.stdout).toMatch(
      /files: 2013 found, 0 sent, skipped: 2005 unchanged since the last run, 5 binary, 3 over 100000 bytes, 1 with unusable names/,
    );
  }, 60_000);

  test("scope resolve, show and narrow", async () => {
    const quiet = await runCli(["scope", "resolve", "--project", "local/cli", "-q"], env);
    expect(quiet.code).toBe(0);
    scopeId = quiet.stdout.trim();
    expect(scopeId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);

    const shown = await runCli(["scope", "show", scopeId], env);
    expect(shown.stdout).toContain(`scope ${scopeId}`);
    expect(shown.stdout).toContain("projects:  local/cli");
    expect(shown.stdout).toContain(`resources: 1 (${resourceId})`);

    const json = await runCli(["scope", "resolve", "--project", "local/cli", "--exclude-path", "notes/**", "--json"], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ resourceIds: [resourceId], excludePaths: ["notes/**"], temporalScope: "current" });

    const narrowed = await runCli(["scope", "narrow", "--scope", scopeId, "--deny", resourceId], env);
    expect(narrowed.code).toBe(0);
    expect(narrowed.stdout).toContain(`parent:    ${scopeId}`);
    expect(narrowed.stdout).toContain("resources: 0");

    // A stale ACMS_SCOPE in the environment does not reach unscoped commands.
    const stale = await runCli(["scope", "resolve", "--project", "local/cli", "-q"], { ...env, ACMS_SCOPE: "not-a-scope" });
    expect(stale.code).toBe(0);

    const noProject = await runCli(["scope", "resolve"], env);
    expect(noProject.code).toBe(1);
    expectOneErrorLine(noProject.stderr, "invalid_argument");

    const foreign = await runCli(["scope", "resolve", "--project", "other/x"], env);
    expect(foreign.code).toBe(1);
    expectOneErrorLine(foreign.stderr, "permission_denied");
  });

  test("search text finds the known file first, as a table and as JSON", async () => {
    const table = await runCli(["search", "text", "flux", "capacitor", "calibration", "--scope", scopeId, "-n", "3"], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^RANK\s+SCORE\s+UKO_URI\s+SNIPPET$/);
    expect(lines[1]).toMatch(
      new RegExp(`^1\\s+[01]\\.\\d{4}\\s+uko://${resourceId}/guide/flux-capacitor\\.md#0\\s+.*flux capacitor calibration`, "i"),
    );
    // The gitignored copy under build/ was never ingested.
    expect(table.stdout).not.toContain("build/out.md");

    const json = await runCli(["search", "text", "weekly status", "--scope", scopeId, "--json", "-n", "5"], env);
    const res = JSON.parse(json.stdout);
    expect(res.scopeId).toBe(scopeId);
    expect(res.results).toHaveLength(5);
    for (const r of res.results) expect(r.path).toMatch(/^notes\/part-\d+\/note-\d+\.md$/);

    const nested = await runCli(["search", "text", "hidden nested gitignore", "--scope", scopeId, "--json"], env);
    expect(JSON.parse(nested.stdout).results.map((r: { path: string }) => r.path)).not.toContain("sub/secret.md");
  });

  test("search text --group-by-document answers one result per document, its best chunk", async () => {
    // A document the server cuts into several chunks, each naming the term.
    const paragraph = (i: number) =>
      `Section ${i}: the tachyon emitter alignment drifts with temperature, so each shift logs readings, ` +
      "compares them with the reference table, and files a ticket when the drift passes the tolerance. ".repeat(6);
    await upsert(t, "writer", [
      {
        resourceId,
        documents: [
          doc("manual/tachyon.md", Array.from({ length: 6 }, (_, i) => paragraph(i)).join("\n\n")),
          doc("manual/other.md", "A short note: the tachyon emitter was serviced."),
        ],
      },
    ]);
    const search = async (...flags: string[]) => {
      const run = await runCli(["search", "text", "tachyon emitter", "--scope", scopeId, "--json", "-n", "10", ...flags], env);
      expect(run.code).toBe(0);
      return JSON.parse(run.stdout).results as Array<{ path: string; score: number; ukoUri: string }>;
    };
    const chunks = await search();
    expect(chunks.filter((r) => r.path === "manual/tachyon.md").length).toBeGreaterThanOrEqual(3);
    const documents = await search("--group-by-document");
    expect(documents.map((r) => r.path).sort()).toEqual(["manual/other.md", "manual/tachyon.md"]);
    // Each document's result is its best-ranked chunk, with that chunk's score.
    for (const d of documents) expect(d).toEqual(chunks.find((c) => c.path === d.path));
  });

  test("search hybrid fuses the text results; search graph answers SPARQL over the scope's graphs", async () => {
    const hybrid = await runCli(["search", "hybrid", "flux capacitor calibration", "--scope", scopeId, "-k", "2"], env);
    expect(hybrid.code).toBe(0);
    expect(hybrid.stdout.split("\n")[1]).toMatch(new RegExp(`^1\\s+[01]\\.\\d{4}\\s+uko://${resourceId}/guide/flux-capacitor\\.md#0`));
    const json = JSON.parse(
      (await runCli(["search", "hybrid", "flux capacitor", "--scope", scopeId, "--sources", "text", "--json"], env)).stdout,
    );
    expect(json.results[0].contributions[0]).toMatchObject({ source: "SOURCE_TEXT", rank: 1 });

    const acms = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
    try {
      const iri = (v: string) => ({ kind: TermKind.IRI, value: v });
      await acms.index.putTriples({
        resourceId,
        triples: [
          { subject: iri("urn:doc:flux"), predicate: iri("urn:p:mentions"), object: { kind: TermKind.LITERAL, value: "gigawatts" } },
        ],
      });
    } finally {
      acms.close();
    }
    const select = await runCli(["search", "graph", "SELECT ?s ?o WHERE { ?s <urn:p:mentions> ?o }", "--scope", scopeId], env);
    expect(select.code).toBe(0);
    expect(select.stdout).toMatch(/^\?s\s+\?o\n<urn:doc:flux>\s+"gigawatts"\n1 row\n$/);
    const ask = await runCli(["search", "graph", 'ASK { ?s <urn:p:mentions> "gigawatts" }', "--scope", scopeId], env);
    expect(ask.stdout).toBe("true\n");
    const update = await runCli(["search", "graph", "DELETE WHERE { ?s ?p ?o }", "--scope", scopeId], env);
    expect(update.code).toBe(1);
    expectOneErrorLine(update.stderr, "invalid_argument");
  });

  test("search vector takes the embedding as JSON or @file and ranks by cosine", async () => {
    const dim = t.config.embeddingDim;
    const axis = (i: number) => Array.from({ length: dim }, (_, j) => (j === i ? 1 : 0));
    await upsert(t, "writer", [
      {
        resourceId,
        documents: [
          doc("vectors/east.md", "east", { chunks: [{ text: "east", embedding: axis(0) }] }),
          doc("vectors/north.md", "north", { chunks: [{ text: "north", embedding: axis(1) }] }),
        ],
      },
    ]);
    const file = join(work, "query-embedding.json");
    writeFileSync(file, JSON.stringify(axis(1).map((v, j) => (j === 0 ? 0.2 : v))));
    const run = await runCli(["search", "vector", "--scope", scopeId, "--embedding", `@${file}`, "-k", "2"], env);
    expect(run.code).toBe(0);
    const rows = run.stdout.trimEnd().split("\n").slice(1);
    expect(rows[0]).toMatch(/^1\s+0\.98\d\d\s+uko:\/\/\S+\/vectors\/north\.md#0\s+north$/);
    expect(rows[1]).toMatch(/^2\s+0\.19\d\d\s+uko:\/\/\S+\/vectors\/east\.md#0\s+east$/);
    const inline = await runCli(["search", "vector", "--scope", scopeId, "--embedding", JSON.stringify(axis(0)), "-k", "1", "--json"], env);
    expect(JSON.parse(inline.stdout).results.map((r: { path: string }) => r.path)).toEqual(["vectors/east.md"]);
    const wrongDim = await runCli(["search", "vector", "--scope", scopeId, "--embedding", "[1, 0]"], env);
    expect(wrongDim.code).toBe(1);
    expect(expectOneErrorLine(wrongDim.stderr, "invalid_argument")).toContain("embedding");
  });

  test("search errors print one line with the code and field, and exit non-zero", async () => {
    const noScope = await runCli(["search", "text", "flux"], env);
    expect(noScope.code).toBe(1);
    expectOneErrorLine(noScope.stderr, "invalid_argument");

    const badMax = await runCli(["search", "text", "flux", "--scope", scopeId, "-n", "0"], env);
    expect(badMax.code).toBe(1);
    expect(expectOneErrorLine(badMax.stderr, "invalid_argument")).toContain("max_results");

    const unknownScope = await runCli(["search", "text", "flux", "--scope", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], env);
    expect(unknownScope.code).toBe(1);
    expectOneErrorLine(unknownScope.stderr, "not_found");

    const badKey = await runCli(["search", "text", "flux", "--scope", scopeId], { ...env, ACMS_API_KEY: "acms_wrong" });
    expect(badKey.code).toBe(1);
    expectOneErrorLine(badKey.stderr, "unauthenticated");

    const down = await runCli(["search", "text", "flux", "--scope", scopeId, "--url", "http://127.0.0.1:1"], env);
    expect(down.code).toBe(1);
    expect(expectOneErrorLine(down.stderr, "unavailable")).toContain("cannot reach the server at http://127.0.0.1:1");

    const badEmbedding = await runCli(["search", "vector", "--scope", scopeId, "--embedding", '[1, "x"]'], env);
    expect(badEmbedding.code).toBe(1);
    expectOneErrorLine(badEmbedding.stderr, "invalid_argument");
  });

  test("fetch prints content in the order asked; out of scope is refused with the offending id", async () => {
    const a = `uko://${resourceId}/guide/flux-capacitor.md`;
    const b = `uko://${resourceId}/sub/visible.md`;
    const run = await runCli(["fetch", b, a, "--scope", scopeId], env);
    expect(run.code).toBe(0);
    expect(run.stdout.indexOf(`==> ${b} <==`)).toBeLessThan(run.stdout.indexOf(`==> ${a} <==`));
    expect(run.stdout).toContain("1.21 gigawatts");

    const missing = await runCli(["fetch", `uko://${resourceId}/nope.md`, "--scope", scopeId], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`uko://${resourceId}/nope.md`);

    const outside = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    const refused = await runCli(["fetch", `uko://${outside}/x.md`, "--scope", scopeId], env);
    expect(refused.code).toBe(1);
    expect(expectOneErrorLine(refused.stderr, "permission_denied")).toContain(`offending resources: ${outside}`);
  });

  test("tiers store, get, list and metrics", async () => {
    const stored = await runCli(
      [
        "tiers",
        "store",
        "--scope",
        scopeId,
        "--project",
        "local/cli",
        "--content",
        "remember the flux capacitor",
        "--meta",
        "kind=note",
        "--json",
      ],
      env,
    );
    expect(stored.code).toBe(0);
    const fragment = JSON.parse(stored.stdout).fragment;
    expect(fragment).toMatchObject({
      content: "remember the flux capacitor",
      tier: "TIER_HOT",
      projectName: "local/cli",
      metadata: { kind: "note" },
    });

    const got = await runCli(["tiers", "get", fragment.fragmentId, "--scope", scopeId], env);
    expect(got.stdout).toContain(`fragment ${fragment.fragmentId}`);
    expect(got.stdout).toContain("tier: hot  project: local/cli");
    expect(got.stdout).toContain("remember the flux capacitor");

    const listed = await runCli(["tiers", "list", "--scope", scopeId, "--role", "reviewer"], env);
    expect(listed.stdout).toMatch(new RegExp(`${fragment.fragmentId}\\s+hot\\s+local/cli`));

    const metrics = await runCli(["tiers", "metrics", "--scope", scopeId], env);
    expect(metrics.code).toBe(0);
    expect(metrics.stdout).toMatch(/^hot\s+1\s+\d+\s+1\s+0$/m);

    const badTier = await runCli(
      ["tiers", "store", "--scope", scopeId, "--project", "local/cli", "--content", "x", "--tier", "lukewarm"],
      env,
    );
    expect(badTier.code).toBe(1);
    expectOneErrorLine(badTier.stderr, "invalid_argument");

    const foreign = await runCli(["tiers", "store", "--scope", scopeId, "--project", "local/elsewhere", "--content", "x"], env);
    expect(foreign.code).toBe(1);
    expect(expectOneErrorLine(foreign.stderr, "permission_denied")).toContain("local/elsewhere");
  });

  test("bin/acms.js runs as a child process: a table on success, one line and status 1 on failure", async () => {
    const childEnv = { ...process.env, ...env, ACMS_SCOPE: scopeId };
    const ok = await exec(process.execPath, [join(ROOT, "bin/acms.js"), "search", "text", "flux capacitor", "-n", "1"], { env: childEnv });
    expect(ok.stdout).toMatch(/^RANK\s+SCORE\s+UKO_URI\s+SNIPPET\n1\s+.*guide\/flux-capacitor\.md/);

    const failed = await exec(process.execPath, [join(ROOT, "bin/acms.js"), "search", "text", "flux", "-n", "-3"], { env: childEnv }).then(
      () => undefined,
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(failed).toBeDefined();
    expect(failed!.code).toBe(1);
    expectOneErrorLine(failed!.stderr, "invalid_argument");
  }, 60_000);
});
