/**
 * Console benchmark: the operator's console (built with Vite, served at /console by the real server) in
 * Debian's headless Chromium, over a project of BENCH_SCALE x 100,000 chunks (100 resources), against a
 * project of 1,000 chunks on the same server, measured in the same run. Two flows, each the median of
 * ROUNDS: opening the projects page on the project (projects, its resources, the DAG drawn), and a text
 * search of 20 results from the search page until the results table is drawn. The ratios say whether the
 * console's cost grows with the corpus (it should not: lists are paged, searches ask for top_k only).
 * The search is also split: inside the page, click to the answer's last byte (Resource Timing) and answer to
 * the 20th row (decoding and drawing); and the same Search called from Node with no browser (the server's
 * share). Whatever grows with the corpus shows in the part that owns it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Page } from "playwright-core";
import { IndexService } from "../gen/acms/v1/index_pb.js";
import { RegistryService } from "../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../gen/acms/v1/text_pb.js";
import { prng } from "../test/support/prng.js";
import { startTestServer, type TestServer } from "../test/support/test-server.js";
import { median } from "./bench-timing.js";
import { syntheticWord, zipfRank } from "./synthetic-corpus.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const ROUNDS = 7;
const RESOURCES = 100;
const WORDS_PER_CHUNK = 40;
const VOCABULARY = 5000;
const BATCH = 500;

/** Registers `project` with RESOURCES resources and `chunks` one-chunk documents spread over them. */
async function seed(t: TestServer, project: string, chunks: number, rand: () => number): Promise<string> {
  const registry = t.client(RegistryService, "admin");
  await registry.createProject({ name: project });
  const ids: string[] = [];
  for (let r = 0; r < RESOURCES; r++)
    ids.push(
      (await registry.registerResource({ project, alias: `r${r}`, kind: "docs", parentIds: r > 0 ? [ids[Math.floor((r - 1) / 4)]] : [] }))
        .resource!.id,
    );
  const perResource = Math.ceil(chunks / RESOURCES);
  async function* messages(r: number) {
    for (let from = 0; from < perResource; from += BATCH) {
      const documents = [];
      for (let d = from; d < Math.min(perResource, from + BATCH); d++) {
        const words: string[] = [];
        for (let w = 0; w < WORDS_PER_CHUNK; w++) words.push(syntheticWord(zipfRank(rand, VOCABULARY)));
        const text = words.join(" ");
        documents.push({ path: `docs/${d}.md`, content: text, metadata: {}, chunks: [{ text }] });
      }
      yield { resourceId: ids[r], documents };
    }
  }
  // One call per resource: a single call of every chunk would run past the server's per-call time budget.
  for (let r = 0; r < RESOURCES; r++) await t.client(IndexService, "admin").upsertDocuments(messages(r));
  return (await t.client(ScopeService, "admin").resolveScope({ projects: [project] })).scope!.scopeId;
}

/** Where one search's time went, measured inside the page (ms). */
interface SearchSplit {
  /** From the click to the response's last byte (the page's fetch, as Resource Timing saw it). */
  network: number;
  /** From the response's last byte to the 20th row in the DOM: decoding and rendering. */
  render: number;
}

/** Arms the page to time the next search: the click, the Search fetch and the 20th row's arrival. */
function armSearchTiming(page: Page): Promise<void> {
  return page.evaluate(() => {
    performance.clearResourceTimings();
    const w = window as unknown as Record<string, number | undefined>;
    w.__clickAt = undefined;
    w.__rowAt = undefined;
    document
      .querySelector("form.search-form button[type=submit]")!
      .addEventListener("click", () => (w.__clickAt = performance.now()), { once: true, capture: true });
    const seen = new MutationObserver(() => {
      if (document.querySelector("#results-table tbody tr:nth-child(20)")) {
        w.__rowAt = performance.now();
        seen.disconnect();
      }
    });
    seen.observe(document.body, { childList: true, subtree: true });
  });
}

function readSearchTiming(page: Page): Promise<SearchSplit> {
  return page.evaluate(() => {
    const w = window as unknown as Record<string, number>;
    const fetches = performance
      .getEntriesByType("resource")
      .filter((e) => e.name.endsWith("/acms.v1.TextBackendService/Search")) as PerformanceResourceTiming[];
    const last = fetches[fetches.length - 1];
    return { network: last.responseEnd - w.__clickAt, render: w.__rowAt - last.responseEnd };
  });
}

/** Median times (ms) of the two console flows on `project` with `scopeId` in use. */
async function flows(
  page: Page,
  t: TestServer,
  project: string,
  scopeId: string,
  query: string,
): Promise<{ load: number; search: number; network: number; render: number }> {
  await page.goto(`${t.server.url}/console/`);
  await page.evaluate(
    ([key, scope]) => {
      sessionStorage.setItem("acms.console.key", key);
      sessionStorage.setItem("acms.console.scope", scope);
    },
    [t.keys.admin, scopeId],
  );
  const load: number[] = [];
  const search: number[] = [];
  const splits: SearchSplit[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    let t0 = performance.now();
    await page.goto(`${t.server.url}/console/#projects`);
    await page.reload();
    await page.getByLabel(/Project \(/).selectOption(project);
    await page.getByRole("heading", { name: `Parent DAG of ${project} (${RESOURCES} resources)` }).waitFor();
    await page.locator("#resources-table tbody tr").first().waitFor();
    load.push(performance.now() - t0);

    await page.getByRole("link", { name: "Search" }).click();
    await page.getByRole("radio", { name: "text" }).check();
    await page.getByLabel("Query").fill(query);
    await armSearchTiming(page);
    t0 = performance.now();
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.locator("#results-table tbody tr").nth(19).waitFor();
    search.push(performance.now() - t0);
    splits.push(await readSearchTiming(page));
    await page.locator("#results-table").evaluate((el) => el.remove());
  }
  return {
    load: median(load),
    search: median(search),
    network: median(splits.map((x) => x.network)),
    render: median(splits.map((x) => x.render)),
  };
}

/** Median time (ms) of the same Search called from Node, no browser: the server's share of the flow. */
async function serverSearch(t: TestServer, scopeId: string, query: string): Promise<number> {
  const text = t.client(TextBackendService, "admin", scopeId);
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await text.search({ query, maxResults: 20 });
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Runs the console benchmark and prints its figures. */
export async function run(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? "1") || 1;
  const big = Math.max(5000, Math.round(100_000 * scale));
  const buildDir = mkdtempSync(join(tmpdir(), "acms-console-bench-"));
  execFileSync(
    process.execPath,
    [join(ROOT, "node_modules", "vite", "bin", "vite.js"), "build", "--config", "console/vite.config.ts", "--logLevel", "warn"],
    {
      cwd: ROOT,
      env: { ...process.env, ACMS_CONSOLE_OUT_DIR: buildDir },
      stdio: "pipe",
    },
  );
  const t = await startTestServer({ env: { ACMS_CONSOLE_DIR: buildDir } });
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-quic",
      "--no-first-run",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const rand = prng(42);
    const t0 = performance.now();
    const smallScope = await seed(t, "local/console-small", 1000, rand);
    const bigScope = await seed(t, "local/console-big", big, rand);
    process.stdout.write(
      `indexed 1,000 + ${big.toLocaleString("en")} chunks over the API in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
    );
    const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
    // A common word (Zipf rank 3): at least 20 hits in either project.
    const query = syntheticWord(3);
    const small = await flows(page, t, "local/console-small", smallScope, query);
    const large = await flows(page, t, "local/console-big", bigScope, query);
    const smallServer = await serverSearch(t, smallScope, query);
    const largeServer = await serverSearch(t, bigScope, query);
    const row = (name: string, a: number, b: number) =>
      process.stdout.write(`${name.padEnd(28)}${a.toFixed(0).padStart(9)} ms  ${b.toFixed(0).padStart(9)} ms  ${(b / a).toFixed(2)}x\n`);
    process.stdout.write(`flow                        1,000 chunks  ${big.toLocaleString("en")} chunks  ratio\n`);
    row("projects page (load, DAG)", small.load, large.load);
    row("text search, 20 results", small.search, large.search);
    row("  in page: click to answer", small.network, large.network);
    row("  in page: answer to rows", small.render, large.render);
    row("  server alone (Node client)", smallServer, largeServer);
  } finally {
    await browser.close();
    await t.close(true);
    rmSync(buildDir, { recursive: true, force: true });
  }
}
