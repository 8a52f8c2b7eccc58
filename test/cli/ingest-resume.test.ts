import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAcmsClient, type AcmsClient } from "../../src/client/create-acms-client.js";
import { ingestDirectory, type IngestOptions } from "../../src/cli/ingest-directory.js";
import type { IngestProgress } from "../../src/cli/ingest-progress.js";
import { loadIngestState } from "../../src/cli/ingest-state.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { runCli } from "./cli-harness.js";

const silent: IngestProgress = { start: () => undefined, update: () => undefined, note: () => undefined, stop: () => undefined };

let t: TestServer;
let work: string;
let client: AcmsClient;

beforeAll(async () => {
  t = await startTestServer();
  work = mkdtempSync(join(tmpdir(), "acms-resume-"));
  client = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  const dir = join(work, "docs");
  for (let i = 0; i < 300; i++) {
    mkdirSync(join(dir, `d${i % 7}`), { recursive: true });
    writeFileSync(join(dir, `d${i % 7}`, `f${i}.txt`), `file ${i} carries the marker token zmark${i}q\n`);
  }
});
afterAll(async () => {
  client.close();
  await t.close(true);
  rmSync(work, { recursive: true, force: true });
});

test("an interrupted ingest resumes without resending confirmed files, and --prune removes deleted ones", async () => {
  const dir = join(work, "docs");
  const statePath = join(work, "state.json");
  const stop = new AbortController();
  const opts: IngestOptions = {
    dir,
    project: "local/resume",
    alias: "docs",
    kind: "docs",
    include: [],
    exclude: [],
    maxFileBytes: 1 << 20,
    prune: false,
    force: false,
    url: t.server.url,
    statePath: () => statePath,
    batchDocs: 10,
    batchesPerStream: 2,
    signal: stop.signal,
    // Interrupt as soon as the server confirmed the first stream (20 files).
    onStreamConfirmed: () => stop.abort(),
  };
  const first = await ingestDirectory(client, opts, silent);
  expect(first.interrupted).toBe(true);
  expect(first.filesSent).toBe(20);
  expect(first.streams).toBe(1);
  const state = loadIngestState(statePath, t.server.url, first.resourceId);
  expect(Object.keys(state.files)).toHaveLength(20);

  const env = { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, HOME: work };
  const resumed = await runCli(["ingest", dir, "--project", "local/resume", "--alias", "docs", "--state-file", statePath, "--json"], env);
  expect(resumed.code).toBe(0);
  const second = JSON.parse(resumed.stdout);
  expect(second).toMatchObject({
    resourceId: first.resourceId,
    createdResource: false,
    filesUnchanged: 20,
    filesSent: 280,
    interrupted: false,
  });

  // Every file is searchable once, whichever run sent it.
  const { scope } = await client.scope.resolveScope({ projects: ["local/resume"] });
  const scoped = client.withScope(scope!.scopeId);
  for (const i of [0, 19, 150, 299]) {
    const { results } = await scoped.text.search({ query: `zmark${i}q`, maxResults: 5 });
    expect(results.map((r) => r.path)).toEqual([`d${i % 7}/f${i}.txt`]);
  }

  // Delete two files: --prune removes exactly those documents.
  unlinkSync(join(dir, "d0", "f0.txt"));
  unlinkSync(join(dir, "d3", "f150.txt"));
  writeFileSync(join(dir, "d1", "f1.txt"), "file 1 now says something else: zchanged1q\n");
  const pruned = await runCli(
    ["ingest", dir, "--project", "local/resume", "--alias", "docs", "--state-file", statePath, "--prune", "--json"],
    env,
  );
  expect(pruned.code).toBe(0);
  expect(JSON.parse(pruned.stdout)).toMatchObject({ filesSent: 1, filesUnchanged: 297, documentsDeleted: 2 });
  const after = client.withScope((await client.scope.resolveScope({ projects: ["local/resume"] })).scope!.scopeId);
  expect((await after.text.search({ query: "zmark150q" })).results).toHaveLength(0);
  expect((await after.text.search({ query: "zmark1q" })).results).toHaveLength(0);
  expect((await after.text.search({ query: "zchanged1q" })).results.map((r) => r.path)).toEqual(["d1/f1.txt"]);
  expect((await after.text.search({ query: "zmark299q" })).results).toHaveLength(1);
});

test("a killed ingest process resumes: at most the unconfirmed stream is sent again", async () => {
  const dir = join(work, "docs");
  const statePath = join(work, "state-kill.json");
  const env = { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, HOME: work };
  // A fresh resource, so the state file starts empty; --force is not needed.
  const run = await runCli(["ingest", dir, "--project", "local/resume", "--alias", "killed", "--state-file", statePath, "--json"], env);
  expect(run.code).toBe(0);
  const full = JSON.parse(run.stdout);
  // Simulate a kill after some streams: keep only part of the state, as a crash between saves would.
  const state = loadIngestState(statePath, t.server.url, full.resourceId);
  const kept = Object.entries(state.files).slice(0, 100);
  writeFileSync(statePath, JSON.stringify({ ...state, files: Object.fromEntries(kept) }));
  const again = await runCli(["ingest", dir, "--project", "local/resume", "--alias", "killed", "--state-file", statePath, "--json"], env);
  const s = JSON.parse(again.stdout);
  expect(s.filesUnchanged).toBe(100);
  expect(s.filesSent).toBe(full.filesSent - 100);
  // Re-sent documents are idempotent upserts: nothing is duplicated.
  const { scope } = await client.scope.resolveScope({ projects: ["local/resume"], includeResources: ["killed"] });
  const { results } = await client.withScope(scope!.scopeId).text.search({ query: "zmark42q" });
  expect(results).toHaveLength(1);
});

test("a document the server refuses is reported and the rest of its batch is kept; empty files are skipped", async () => {
  const dir = join(work, "mixed");
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 6; i++) writeFileSync(join(dir, `ok${i}.md`), `kept file ${i} zkept${i}q\n`);
  writeFileSync(join(dir, "empty.md"), "");
  writeFileSync(join(dir, "blank.md"), "  \n\n");
  // Over the server's 4 MiB document limit: only reachable past the CLI's --max-file-bytes check.
  writeFileSync(join(dir, "huge.md"), "word ".repeat(900_000));
  const summary = await ingestDirectory(
    client,
    {
      dir,
      project: "local/resume",
      alias: "mixed",
      kind: "docs",
      include: [],
      exclude: [],
      maxFileBytes: 8 << 20,
      prune: false,
      force: false,
      url: t.server.url,
      statePath: () => join(work, "state-mixed.json"),
    },
    silent,
  );
  expect(summary).toMatchObject({ filesSent: 6, skippedEmpty: 2, documentsUpserted: 6 });
  expect(summary.rejected).toHaveLength(1);
  expect(summary.rejected[0].path).toBe("huge.md");
  expect(summary.rejected[0].reason).toMatch(/content: must be at most 4194304 bytes/);
  const state = loadIngestState(join(work, "state-mixed.json"), t.server.url, summary.resourceId);
  expect(Object.keys(state.files).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `ok${i}.md`));
});
