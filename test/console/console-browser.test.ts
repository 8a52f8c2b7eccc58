import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { doc, makeResource, upsert } from "../index/index-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

jest.setTimeout(180_000);

const ROOT = resolve(__dirname, "../..");
/** Screenshots of every page, for people to review (git-ignored). */
const SHOTS = join(ROOT, "test-output", "console");

/**
 * The console end to end: built with Vite from console/, served by the real server on port 0, driven in
 * Debian's headless Chromium. Each page's main flow runs against data seeded through the API.
 */
describe("operator's console in Chromium", () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let buildDir: string;
  const ids: Record<string, string> = {};
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    buildDir = mkdtempSync(join(tmpdir(), "acms-console-build-"));
    execFileSync(join(ROOT, "node_modules", ".bin", "vite"), ["build", "--config", "console/vite.config.ts", "--logLevel", "warn"], {
      cwd: ROOT,
      env: { ...process.env, ACMS_CONSOLE_OUT_DIR: buildDir },
      stdio: "pipe",
    });
    t = await startTestServer({ env: { ACMS_CONSOLE_DIR: buildDir, ACMS_EMBEDDING_DIM: "4", ACMS_CONTEXT_MAX_TOKENS_HOT: "6000" } });
    // local/api: a monorepo with two children and a grandchild under both (a DAG, not a tree).
    ids.mono = await makeResource(t, "writer", "local/api", "monorepo");
    const reg = t.client(RegistryService, "writer");
    const child = async (alias: string, parents: string[]) =>
      (await reg.registerResource({ project: "local/api", alias, kind: "docs", parentIds: parents })).resource!.id;
    ids.docs = await child("api-docs", [ids.mono]);
    ids.src = await child("api-src", [ids.mono]);
    ids.shared = await child("shared-schemas", [ids.docs, ids.src]);
    ids.web = await makeResource(t, "writer", "local/web", "frontend");
    await reg.linkResource({ project: "local/web", resourceId: ids.docs, alias: "backend-docs" });
    await upsert(t, "writer", [
      {
        resourceId: ids.docs,
        documents: [
          doc("guide/retry.md", "Retry failed requests with exponential backoff.", {
            chunks: [{ text: "Retry failed requests with exponential backoff.", embedding: [1, 0, 0, 0] }],
          }),
          doc("guide/cache.md", "Cache invalidation is hard; retry later.", {
            chunks: [{ text: "Cache invalidation is hard; retry later.", embedding: [0, 1, 0, 0] }],
          }),
        ],
      },
      {
        resourceId: ids.shared,
        documents: [
          doc("schema/user.json", "user schema with retry policy", {
            chunks: [{ text: "user schema with retry policy", embedding: [0.8, 0.2, 0, 0] }],
          }),
        ],
      },
      {
        resourceId: ids.web,
        documents: [doc("app.tsx", "frontend retry button", { chunks: [{ text: "frontend retry button", embedding: [1, 0, 0, 0] }] })],
      },
    ]);
    const iri = (value: string) => ({ kind: TermKind.IRI, value });
    await t.client(IndexService, "writer").putTriples({
      resourceId: ids.docs,
      triples: [
        {
          subject: iri("http://example.org/Backoff"),
          predicate: iri("http://www.w3.org/2000/01/rdf-schema#label"),
          object: { kind: TermKind.LITERAL, value: "Exponential Backoff", language: "en" },
        },
        {
          subject: iri("http://example.org/Backoff"),
          predicate: iri("http://example.org/describedBy"),
          object: iri(`uko://${ids.docs}/guide/retry.md`),
        },
      ],
      replace: true,
    });
    // Tier state of local/api: two hot fragments, one read twice (hits) and one id that misses.
    const { scope } = await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] });
    const tiers = t.client(ContextTierService, "writer", scope!.scopeId);
    const a = (await tiers.storeFragment({ fragment: { content: "plan: retry with backoff", tier: Tier.HOT, projectName: "local/api" } }))
      .fragment!;
    await tiers.storeFragment({ fragment: { content: "decision: cache for 60 s", tier: Tier.WARM, projectName: "local/api" } });
    await tiers.getFragment({ fragmentId: a.fragmentId });
    await tiers.getFragment({ fragmentId: a.fragmentId });

    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
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
    page = await browser.newPage({ viewport: { width: 1366, height: 800 } });
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close(true);
    rmSync(buildDir, { recursive: true, force: true });
  });

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  test("sign-in keeps the key in sessionStorage only, and a wrong key is refused", async () => {
    await page.goto(`${t.server.url}/console/`);
    const key = page.getByLabel("API key");
    await expect(key.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await key.fill("not-a-key");
    await page.getByRole("button", { name: "Open the console" }).click();
    await page.getByRole("alert").getByText("Unauthenticated").waitFor();
    await shot("0-sign-in-refused");
    await key.fill(t.keys.writer);
    await key.press("Enter");
    await page.getByRole("heading", { name: "Projects and resources" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("acms.console.key"))).toBe(t.keys.writer);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(page.url()).not.toContain(t.keys.writer);
  });

  test("projects page draws the parent DAG and the aliases per project", async () => {
    await page.getByRole("heading", { name: /Parent DAG of local\/api \(4 resources\)/ }).waitFor();
    const rows = page.locator(".tree-row");
    const drawn = await rows.evaluateAll((els) =>
      els.map((e) => `${e.getAttribute("data-depth")}:${e.querySelector("strong")?.textContent}${e.querySelector(".repeat") ? "*" : ""}`),
    );
    expect(drawn).toEqual(["0:monorepo", "1:api-docs", "2:shared-schemas", "1:api-src", "2:shared-schemas*"]);
    const docsRow = page.locator("#resources-table tbody tr", { has: page.locator("th", { hasText: "api-docs" }) });
    await expect(docsRow.textContent()).resolves.toContain("local/web: backend-docs");
    await expect(docsRow.textContent()).resolves.toContain("local/api: api-docs");
    await shot("1-projects");
    await page.getByLabel(/Project \(/).selectOption("local/web");
    await page.getByRole("heading", { name: /Parent DAG of local\/web \(2 resources\)/ }).waitFor();
  });

  test("long lists are paged: a project of 120 resources puts 50 rows at a time into the page", async () => {
    const reg = t.client(RegistryService, "writer");
    await reg.createProject({ name: "local/big" });
    for (let i = 0; i < 120; i += 1)
      await reg.registerResource({ project: "local/big", alias: `r${String(i).padStart(3, "0")}`, kind: "dataset" });
    await page.reload();
    await page.getByLabel(/Project \(/).selectOption("local/big");
    await page.getByRole("heading", { name: /Parent DAG of local\/big \(120 resources\)/ }).waitFor();
    await expect(page.locator(".tree-row").count()).resolves.toBe(50);
    await expect(page.locator("#resources-table tbody tr").count()).resolves.toBe(50);
    const treePager = page.getByRole("group", { name: "Resource tree pages" });
    await expect(treePager.locator(".page-status").textContent()).resolves.toBe("1-50 of 120");
    await treePager.getByRole("button", { name: "Next page" }).click();
    await treePager.getByRole("button", { name: "Next page" }).click();
    await expect(treePager.locator(".page-status").textContent()).resolves.toBe("101-120 of 120");
    await expect(page.locator(".tree-row strong").first().textContent()).resolves.toBe("r100");
    await expect(treePager.getByRole("button", { name: "Next page" }).isDisabled()).resolves.toBe(true);
    // The filter narrows the table to what matches, still a page at a time; emptied, it shows every page again.
    const filter = page.getByLabel("Filter resources (alias or kind contains, or id starts with)");
    await filter.fill("r11");
    await page.waitForFunction(() => document.querySelectorAll("#resources-table tbody tr").length === 10);
    expect(await page.locator("#resources-table tbody th").allTextContents()).toEqual(Array.from({ length: 10 }, (_, i) => `r11${i}`));
    await expect(page.getByRole("group", { name: "Resources pages" }).isHidden()).resolves.toBe(true);
    await shot("1c-projects-filtered");
    await filter.fill("");
    await page.getByRole("group", { name: "Resources pages" }).locator(".page-status", { hasText: "1-50 of 120" }).waitFor();
    await shot("1b-projects-paged");
  });

  test("scope builder resolves live as allow/deny change, lists the key's stored scopes and shows a refusal", async () => {
    // Scopes made by other clients: the writer's are listed (from the store, not this tab), the reader's never.
    const writerScopes = t.client(ScopeService, "writer");
    const elsewhere = (await writerScopes.resolveScope({ projects: ["local/api"], includePaths: ["made/elsewhere/**"] })).scope!.scopeId;
    for (let i = 0; i < 21; i += 1) await writerScopes.resolveScope({ projects: ["local/web"], includePaths: [`bulk/${i}/**`] });
    const readers = (await t.client(ScopeService, "reader").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    await page.getByRole("link", { name: "Scope builder" }).click();
    await page.getByLabel("local/api").check();
    await page.getByRole("heading", { name: "Resolved scope: 4 resources" }).waitFor();
    await page.getByLabel("Deny resources (one per line)").fill("api-src");
    // api-src is denied with its descendants: shared-schemas goes too, although api-docs is its other parent.
    await page.getByRole("heading", { name: "Resolved scope: 2 resources" }).waitFor();
    expect(await page.locator("#resolved-resources li").allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining("local/api:monorepo"), expect.stringContaining("local/api:api-docs")]),
    );
    const denied = await page.locator("#resolved-scope-id").textContent();
    await page.getByLabel("Deny resources (one per line)").fill("");
    await page.getByLabel("Allow resources (one per line: ULID, alias or namespace/project:alias; empty = all)").fill("api-docs");
    // api-docs with its descendant shared-schemas: the same count as before, so wait for the new scope id.
    await page.waitForFunction((before) => document.querySelector("#resolved-scope-id")?.textContent !== before, denied);
    await page.getByRole("heading", { name: "Resolved scope: 2 resources" }).waitFor();
    expect(await page.locator("#resolved-resources li").allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining("local/api:api-docs"), expect.stringContaining("local/api:shared-schemas")]),
    );
    await page.getByRole("button", { name: "Use this scope" }).click();
    const scopeId = await page.locator("#resolved-scope-id").textContent();
    expect(await page.evaluate(() => sessionStorage.getItem("acms.console.scope"))).toBe(scopeId);
    await expect(page.locator("#stored-scopes tbody tr").count()).resolves.toBeGreaterThanOrEqual(3);
    await expect(page.locator("#stored-scopes tr.current").textContent()).resolves.toContain(scopeId!);
    await shot("2-scope-builder");
    await expect(page.locator("#scope-in-use").textContent()).resolves.toContain(scopeId!);
    // Denying what is allowed empties the scope: every call with it is refused with a ScopeViolation, shown as such.
    await page.getByLabel("Deny resources (one per line)").fill("api-docs");
    await page.getByRole("heading", { name: "Resolved scope: 0 resources" }).waitFor();
    const refusal = page.getByRole("alert", { name: "Refused: scope violation" });
    await refusal.waitFor();
    await expect(page.getByRole("button", { name: "Use this scope" }).count()).resolves.toBe(0);
    await expect(refusal.locator(".violation-scope-projects").textContent()).resolves.toContain("local/api");
    await shot("3-scope-refused");
    await page.getByLabel("Deny resources (one per line)").fill("");
    await page.getByRole("heading", { name: "Resolved scope: 2 resources" }).waitFor();

    // The stored scopes come 20 a page from the server, newest first; the scope made elsewhere is on page 2.
    const storedRows = page.locator("#stored-table tbody tr");
    await expect(storedRows.count()).resolves.toBe(20);
    await expect(page.locator(`#stored-table tr[data-scope-id="${elsewhere}"]`).count()).resolves.toBe(0);
    const pager = page.getByRole("group", { name: "Stored scopes pages" });
    await pager.getByRole("button", { name: "Next page" }).click();
    await pager.locator(".page-status", { hasText: "page 2" }).waitFor();
    const row = page.locator(`#stored-table tr[data-scope-id="${elsewhere}"]`);
    await expect(row.textContent()).resolves.toContain("paths made/elsewhere/**");
    await shot("2b-stored-scopes-page-2");
    await expect(page.locator("#stored-scopes").textContent()).resolves.not.toContain(readers);
    // Opening a stored scope reads it with GetScope: the form gets its settings back, the result its resources.
    await pager.getByRole("button", { name: "Previous page" }).click();
    await pager.locator(".page-status", { hasText: "page 1" }).waitFor();
    await expect(page.locator("#stored-scopes").textContent()).resolves.not.toContain(readers);
    await page.getByRole("button", { name: `Open scope ${denied}` }).click();
    await page.waitForFunction((id) => document.querySelector("#resolved-scope-id")?.textContent === id, denied);
    await page.getByRole("heading", { name: "Resolved scope: 2 resources" }).waitFor();
    await expect(page.getByLabel("Deny resources (one per line)").inputValue()).resolves.toBe("api-src");
    await expect(page.getByLabel("local/api").isChecked()).resolves.toBe(true);
    expect(await page.locator("#resolved-resources li").allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining("local/api:monorepo"), expect.stringContaining("local/api:api-docs")]),
    );
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("resolved-h");
  });

  test("search playground: hybrid shows per-source ranks and flags, text/vector/graph answer, FetchContent", async () => {
    await page.getByRole("link", { name: "Search" }).click();
    await page.getByLabel("Query").fill("retry");
    await page.getByLabel(/Embedding/).fill("[1, 0, 0, 0]");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.locator("#results-table").waitFor();
    const first = page.locator("#results-table tbody tr").first();
    // Every hybrid row says why it ranked there: each source's rank and score; fused scores descend.
    const fused = (await page.locator("#results-table tbody td.num").allTextContents()).map(Number);
    expect(fused.length).toBeGreaterThanOrEqual(2);
    expect([...fused].sort((a, b) => b - a)).toEqual(fused);
    const retry = page.locator("#results-table tbody tr", { hasText: `uko://${ids.docs}/guide/retry.md#0` });
    const why = await retry.locator(".contributions li").allTextContents();
    expect(why).toEqual(expect.arrayContaining([expect.stringMatching(/^text: rank \d+, score \d/), "vector: rank 1, score 1.0000"]));
    await expect(page.locator("#flag-exhaustive").textContent()).resolves.toMatch(/^(true|false)$/);
    await expect(page.locator("#flag-index-generation").textContent()).resolves.toMatch(/^[1-9]\d*$/);
    // Nothing outside the scope (shared-schemas, the frontend) is among the results.
    const uris = await page.locator("#results-table .uri").allTextContents();
    expect(uris.every((u) => u.startsWith(`uko://${ids.docs}/`) || u.startsWith(`uko://${ids.shared}/`))).toBe(true);
    expect(uris.some((u) => u.includes(ids.web))).toBe(false);
    await retry.getByRole("button", { name: /^Fetch uko/ }).click();
    await page.locator("#fetched pre").getByText("Retry failed requests with exponential backoff.").waitFor();
    await shot("4-search-hybrid");

    await page.getByRole("radio", { name: "text" }).check();
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page
      .locator("#results-table .contributions li", { hasText: /^text: rank 1,/ })
      .first()
      .waitFor();
    await expect(page.locator("#results-table .contributions li", { hasText: "vector" }).count()).resolves.toBe(0);

    await page.getByRole("radio", { name: "vector" }).check();
    await page.getByLabel(/Embedding/).fill("0 1 0 0");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.locator("#results-table tbody tr").first().getByText(`uko://${ids.docs}/guide/cache.md#0`).waitFor();
    // No embedding pasted: the query text is sent, which this server (no embedder) refuses, and says why.
    await page.getByLabel(/Embedding/).fill("");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page
      .locator("#results")
      .getByText(/no embedder configured/)
      .waitFor();

    await page.getByRole("radio", { name: "graph" }).check();
    await page.getByLabel(/SPARQL/).fill("SELECT ?label WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label }");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.locator("#sparql-table td").getByText('"Exponential Backoff"').waitFor();
    await expect(page.locator("#sparql-table thead th").allTextContents()).resolves.toEqual(["?label"]);
    await shot("5-search-graph");
  });

  test("a refusal: fetching a unit outside the scope shows the ScopeViolation with the offending id", async () => {
    await page.getByLabel("Fetch any UKO URI").fill(`uko://${ids.web}/app.tsx`);
    await page.getByRole("button", { name: "Fetch", exact: true }).click();
    const refusal = page.locator("#fetched").getByRole("alert", { name: "Refused: scope violation" });
    await refusal.waitFor();
    await expect(refusal.locator(".violation-resources").textContent()).resolves.toContain(ids.web);
    await expect(refusal.locator(".violation-scope-projects").textContent()).resolves.toContain("local/api");
    await expect(refusal.textContent()).resolves.not.toContain("frontend retry button");
    await shot("6-fetch-refused");
  });

  test("tiers page shows populations, budgets and hit rates of the project", async () => {
    await page.getByRole("link", { name: "Context tiers" }).click();
    const hot = page.locator("#tiers-table tr[data-tier=hot]");
    await hot.waitFor();
    const cells = await hot.locator("td").allTextContents();
    expect(cells[0]).toBe("1");
    expect(cells[2]).toMatch(/^\d+ of 6000 tokens$/);
    expect(cells[3]).toMatch(/^100\.0 % \(2 of 2\)$/);
    const warm = await page.locator("#tiers-table tr[data-tier=warm] td").allTextContents();
    expect(warm[0]).toBe("1");
    expect(warm[2]).toBe("1 of 500 fragments");
    await shot("7-tiers");
  });

  test("keyboard: the skip link and the navigation are reachable with Tab, and nothing logged an error", async () => {
    await page.goto(`${t.server.url}/console/#projects`);
    await page.reload();
    await page.keyboard.press("Tab");
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe("Skip to content");
    await page.keyboard.press("Tab");
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe("Projects");
    // The key survived the reload (same tab) and no page error was logged; refused calls log network errors only.
    await page.getByRole("heading", { name: "Projects and resources" }).waitFor();
    expect(consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
  });
});
