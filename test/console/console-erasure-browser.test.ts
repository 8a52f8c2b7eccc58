import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { doc, makeResource, upsert } from "../index/index-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

jest.setTimeout(180_000);

const ROOT = resolve(__dirname, "../..");
/** Screenshots of the deletion flows, for people to review (git-ignored). */
const SHOTS = join(ROOT, "test-output", "console");

/**
 * Deleting from the console, end to end: the Vite build served by the real server, driven in Debian's headless
 * Chromium. Erase a resource, unlink one, delete a project (refused without cascade, then with it): each asks
 * first in a dialog naming what goes, cancelling changes nothing, confirming goes through the RPCs and shows
 * the ErasureReport; afterwards no search finds anything of it; a read-only key is refused.
 */
describe("console deletes with a confirmation and shows the erasure report", () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let buildDir: string;
  const ids: Record<string, string> = {};
  const consoleErrors: string[] = [];
  /** A scope over local/shop resolved before any deletion (a stored scope that held the erased resource). */
  let oldScope: string;

  beforeAll(async () => {
    buildDir = mkdtempSync(join(tmpdir(), "acms-console-build-"));
    execFileSync(join(ROOT, "node_modules", ".bin", "vite"), ["build", "--config", "console/vite.config.ts", "--logLevel", "warn"], {
      cwd: ROOT,
      env: { ...process.env, ACMS_CONSOLE_OUT_DIR: buildDir },
      stdio: "pipe",
    });
    t = await startTestServer({ env: { ACMS_CONSOLE_DIR: buildDir, ACMS_EMBEDDING_DIM: "4" } });
    const reg = t.client(RegistryService, "writer");
    ids.catalog = await makeResource(t, "writer", "local/shop", "catalog");
    ids.orders = await makeResource(t, "writer", "local/shop", "orders");
    ids.frontend = await makeResource(t, "writer", "local/web", "frontend");
    ids.notes = await makeResource(t, "writer", "local/legacy", "old-notes");
    await reg.linkResource({ project: "local/web", resourceId: ids.catalog, alias: "shop-catalog" });
    await reg.linkResource({ project: "local/shop", resourceId: ids.frontend, alias: "web-ui" });
    await upsert(t, "writer", [
      {
        resourceId: ids.catalog,
        documents: [
          doc("items/kettle.md", "zephyrine kettle in brushed steel", {
            chunks: [{ text: "zephyrine kettle in brushed steel", embedding: [1, 0, 0, 0] }],
          }),
          doc("items/teapot.md", "zephyrine teapot, glazed", { chunks: [{ text: "zephyrine teapot, glazed", embedding: [0, 1, 0, 0] }] }),
        ],
      },
      {
        resourceId: ids.orders,
        documents: [doc("2026/q1.md", "orders of the first quarter", { chunks: [{ text: "orders q1", embedding: [0, 0, 1, 0] }] })],
      },
      { resourceId: ids.notes, documents: [doc("notes.md", "quillwort legacy notes")] },
    ]);
    const iri = (value: string) => ({ kind: TermKind.IRI, value });
    await t.client(IndexService, "writer").putTriples({
      resourceId: ids.catalog,
      triples: [
        { subject: iri("http://example.org/Kettle"), predicate: iri("http://example.org/soldIn"), object: iri("http://example.org/Shop") },
      ],
      replace: true,
    });
    oldScope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/shop", "local/web"] })).scope!.scopeId;

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
    page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
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

  /** The writer's text hits for `query` in a scope over both projects, resolved now (or the given stored scope). */
  const textHits = async (query: string, scopeId?: string) => {
    const scope =
      scopeId ?? (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/shop", "local/web"] })).scope!.scopeId;
    return (await t.client(TextBackendService, "writer", scope).search({ query })).results;
  };
  const vectorHits = async (embedding: number[], scopeId: string) =>
    (await t.client(VectorBackendService, "writer", scopeId).similaritySearch({ embedding, topK: 10 })).results;

  const signIn = async (principal: string) => {
    await page.goto(`${t.server.url}/console/#projects`);
    await page.evaluate(() => sessionStorage.clear());
    await page.reload();
    await page.getByLabel("API key").fill(t.keys[principal]);
    await page.getByRole("button", { name: "Open the console" }).click();
    await page.getByRole("heading", { name: "Projects and resources" }).waitFor();
  };
  const openProject = async (project: string, count: number) => {
    await page.getByLabel(/Project \(/).selectOption(project);
    await page.getByRole("heading", { name: `Parent DAG of ${project} (${count} resources)` }).waitFor();
  };
  const row = (alias: string) =>
    page.locator("#resources-table tbody tr", { has: page.locator("th", { hasText: new RegExp(`^${alias}$`) }) });

  test("a read-only key is refused: the dialog asks, the server says PERMISSION_DENIED, nothing goes", async () => {
    await signIn("reader");
    await openProject("local/shop", 3);
    await page.getByRole("button", { name: "Erase resource catalog" }).click();
    const dialog = page.getByRole("dialog", { name: "Erase resource catalog?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Erase catalog" }).click();
    const refusal = page.getByRole("region", { name: "Erasing local/shop:catalog failed" });
    await refusal.waitFor();
    await expect(refusal.textContent()).resolves.toContain("refused, nothing was deleted");
    await expect(refusal.getByRole("alert").textContent()).resolves.toContain("PermissionDenied");
    await shot("8-erase-refused-read-only");
    // Still there, in the console and for the API.
    await page.getByRole("heading", { name: "Parent DAG of local/shop (3 resources)" }).waitFor();
    await expect(row("catalog").count()).resolves.toBe(1);
    expect((await textHits("zephyrine")).map((r) => r.resourceId)).toEqual([ids.catalog, ids.catalog]);
    // The project cannot be deleted with it either.
    await page.getByRole("button", { name: "Delete project local/shop…" }).click();
    const projectDialog = page.getByRole("dialog", { name: "Delete project local/shop?" });
    await projectDialog.getByLabel(/Also erase the 2 resources it owns/).check();
    await projectDialog.getByRole("button", { name: "Delete local/shop" }).click();
    await page.getByRole("region", { name: "Deleting project local/shop failed" }).waitFor();
    expect((await t.client(RegistryService, "admin").listProjects({})).projects.map((p) => p.name)).toContain("local/shop");
  });

  test("the confirmation names the resource, its project and links; cancelling deletes nothing", async () => {
    await signIn("writer");
    await openProject("local/shop", 3);
    await page.getByRole("button", { name: "Erase resource catalog" }).click();
    const dialog = page.getByRole("dialog", { name: "Erase resource catalog?" });
    await dialog.waitFor();
    await expect(dialog.locator(".confirm-name").textContent()).resolves.toBe("local/shop:catalog");
    await expect(dialog.locator(".confirm-id").textContent()).resolves.toBe(ids.catalog);
    await expect(dialog.locator(".confirm-owner").textContent()).resolves.toBe("local/shop");
    await expect(dialog.locator(".confirm-links").textContent()).resolves.toContain("local/web:shop-catalog");
    await expect(dialog.textContent()).resolves.toContain("retained versions");
    // Focus starts on Cancel: Enter on a freshly opened dialog never erases.
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe("Cancel");
    await shot("9-erase-confirmation");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    await expect(page.locator("#erasure-outcome").textContent()).resolves.toBe("");
    await expect(row("catalog").count()).resolves.toBe(1);
    const listed = (await t.client(RegistryService, "writer").listResources({ project: "local/shop" })).resources.map((r) => r.id);
    expect(listed).toContain(ids.catalog);
    expect(await textHits("zephyrine")).toHaveLength(2);
    // Escape cancels too.
    await page.getByRole("button", { name: "Erase resource catalog" }).click();
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    expect(await textHits("zephyrine")).toHaveLength(2);
  });

  test("confirming erases it: the report counts what went and no search finds anything of it", async () => {
    await page.getByRole("button", { name: "Erase resource catalog" }).click();
    await page.getByRole("dialog", { name: "Erase resource catalog?" }).getByRole("button", { name: "Erase catalog" }).click();
    const report = page.getByRole("status", { name: "Erasure report" });
    await report.waitFor();
    await expect(report.getByRole("heading").textContent()).resolves.toBe(`Erased resource local/shop:catalog (${ids.catalog})`);
    const counts = Object.fromEntries(
      await report
        .locator("tbody tr")
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute("data-kind"), Number(r.querySelector("td")?.textContent)])),
    );
    expect(counts).toMatchObject({ documents: 2, chunks: 2, vectors: 2, triples: 1, links: 2 });
    await expect(report.locator("#erased-resources").textContent()).resolves.toBe(ids.catalog);
    await shot("10-erasure-report");
    // The page shows the project as it is now; the search finds nothing of it, in a new scope or in an old one.
    await page.getByRole("heading", { name: "Parent DAG of local/shop (2 resources)" }).waitFor();
    await expect(row("catalog").count()).resolves.toBe(0);
    expect(await textHits("zephyrine")).toEqual([]);
    expect(await textHits("zephyrine", oldScope)).toEqual([]);
    const near = await vectorHits([1, 0, 0, 0], oldScope);
    expect(near.length).toBeGreaterThan(0);
    expect(near.some((r) => r.resourceId === ids.catalog)).toBe(false);
    const web = (await t.client(RegistryService, "writer").listResources({ project: "local/web" })).resources.map((r) => r.alias);
    expect(web).toEqual(["frontend"]);
  });

  test("unlinking removes only the link: the resource stays in its owning project", async () => {
    await expect(row("web-ui").locator("td").nth(2).textContent()).resolves.toBe("local/web");
    await expect(
      row("orders")
        .getByRole("button", { name: /^Unlink/ })
        .count(),
    ).resolves.toBe(0);
    await page.getByRole("button", { name: "Unlink web-ui from local/shop" }).click();
    const dialog = page.getByRole("dialog", { name: "Unlink web-ui from local/shop?" });
    await expect(dialog.locator(".confirm-name").textContent()).resolves.toBe("local/shop:web-ui");
    await expect(dialog.locator(".confirm-id").textContent()).resolves.toBe(ids.frontend);
    await expect(dialog.locator(".confirm-owner").textContent()).resolves.toBe("local/web");
    await dialog.getByRole("button", { name: "Unlink web-ui" }).click();
    await page.getByRole("status", { name: "Unlink report" }).getByRole("heading", { name: "Unlinked local/shop:web-ui" }).waitFor();
    await page.getByRole("heading", { name: "Parent DAG of local/shop (1 resources)" }).waitFor();
    await expect(row("web-ui").count()).resolves.toBe(0);
    const frontend = (await t.client(RegistryService, "writer").listResources({ project: "local/web" })).resources.find(
      (r) => r.id === ids.frontend,
    );
    expect(frontend?.links.map((l) => `${l.project}:${l.alias}`)).toEqual(["local/web:frontend"]);
  });

  test("deleting a project that owns resources is refused without cascade and erases them with it", async () => {
    await openProject("local/legacy", 1);
    await page.getByRole("button", { name: "Delete project local/legacy…" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete project local/legacy?" });
    await expect(dialog.locator(".confirm-name").textContent()).resolves.toBe("local/legacy");
    await expect(dialog.locator(".confirm-owned").textContent()).resolves.toContain(`old-notes ${ids.notes}`);
    await expect(dialog.getByLabel(/Also erase the 1 resource it owns \(cascade\)/).isChecked()).resolves.toBe(false);
    await dialog.getByRole("button", { name: "Delete local/legacy" }).click();
    const refusal = page.getByRole("region", { name: "Deleting project local/legacy failed" });
    await refusal.waitFor();
    await expect(refusal.textContent()).resolves.toContain("refused, nothing was deleted");
    await expect(refusal.getByRole("alert").textContent()).resolves.toContain("FailedPrecondition");
    await expect(refusal.textContent()).resolves.toContain("tick “Also erase the resources it owns (cascade)”");
    await shot("11-delete-project-refused");
    expect((await t.client(RegistryService, "admin").listProjects({})).projects.map((p) => p.name)).toContain("local/legacy");
    const legacyScope = (await t.client(ScopeService, "admin").resolveScope({ projects: ["local/legacy"] })).scope!.scopeId;
    expect(await t.client(TextBackendService, "admin", legacyScope).search({ query: "quillwort" })).toMatchObject({ results: [{}] });

    await page.getByRole("heading", { name: "Parent DAG of local/legacy (1 resources)" }).waitFor();
    await page.getByRole("button", { name: "Delete project local/legacy…" }).click();
    await dialog.getByLabel(/Also erase the 1 resource it owns \(cascade\)/).check();
    await shot("12-delete-project-cascade");
    await dialog.getByRole("button", { name: "Delete local/legacy" }).click();
    const report = page.getByRole("status", { name: "Erasure report" });
    await report.getByRole("heading", { name: "Deleted project local/legacy with the resources it owned" }).waitFor();
    await expect(report.locator("tr[data-kind=documents] td").textContent()).resolves.toBe("1");
    await expect(report.locator("#erased-resources").textContent()).resolves.toBe(ids.notes);
    await shot("13-delete-project-report");
    await page.getByLabel("Project (2 visible to this key)").waitFor();
    expect(
      await page
        .getByLabel(/Project \(/)
        .locator("option")
        .allTextContents(),
    ).toEqual(["local/shop", "local/web"]);
    expect((await t.client(RegistryService, "admin").listProjects({})).projects.map((p) => p.name)).not.toContain("local/legacy");
    // The stored scope over the deleted project finds nothing of it.
    expect((await t.client(TextBackendService, "admin", legacyScope).search({ query: "quillwort" })).results).toEqual([]);
  });

  test("nothing logged a page error (refused calls log network errors only)", () => {
    expect(consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
  });
});
