import type { ResourceScope } from "@acms/client/gen/acms/v1/scope_pb.js";
import { announce, debounce, field, h, lines, plural, replace } from "../dom.js";
import { errorView } from "../error-view.js";
import { pagedList } from "../paged-list.js";
import { client, getScopeId, setScopeId, storedScopes, type StoredScope } from "../session.js";
import { allRows } from "../all-rows.js";
import { listAllProjects, listAllResources } from "@acms/client/web";

/** How long typing must pause before the scope is resolved again. */
const RESOLVE_DEBOUNCE_MS = 300;

/**
 * The scope builder: projects, allow/deny lists and path globs; every change resolves the scope on the
 * server (debounced) and shows the resolved resource set live, or the refusal. Beside it, the scopes stored
 * for this key (every one it ever resolved or narrowed, from any client), a page at a time; opening one reads
 * it with GetScope and shows it as resolved, its settings put back into the form.
 */
export async function scopePage(main: HTMLElement): Promise<void> {
  const projectsBox = h("fieldset", { class: "projects" }, h("legend", {}, "Projects"), "Loading…");
  const include = h("textarea", { name: "include_resources", rows: 3, spellcheck: "false" });
  const exclude = h("textarea", { name: "exclude_resources", rows: 3, spellcheck: "false" });
  const includePaths = h("textarea", { name: "include_paths", rows: 2, spellcheck: "false" });
  const excludePaths = h("textarea", { name: "exclude_paths", rows: 2, spellcheck: "false" });
  const temporal = h(
    "select",
    { name: "temporal_scope" },
    ["current", "recent", "all"].map((t) => h("option", { value: t }, t)),
  );
  const expand = h("input", { type: "checkbox", name: "expand_descendants", checked: true });
  const result = h("section", { id: "scope-result", "aria-labelledby": "resolved-h", "aria-busy": "false" });
  const stored = h("section", { id: "stored-scopes", "aria-labelledby": "stored-h" });
  const form = h(
    "form",
    { class: "scope-form", "aria-label": "Scope builder", onsubmit: (e: Event) => e.preventDefault() },
    projectsBox,
    field("Allow resources (one per line: ULID, alias or namespace/project:alias; empty = all)", include),
    field("Deny resources (one per line)", exclude),
    field("Include paths (globs, one per line; ** is recursive)", includePaths),
    field("Exclude paths (globs, one per line)", excludePaths),
    field("Temporal scope", temporal),
    h("div", { class: "field checkbox" }, expand, h("label", { for: (expand.id = "expand-descendants") }, "Expand to DAG descendants")),
  );
  replace(main, h("h2", {}, "Scope builder"), h("div", { class: "two-col" }, form, h("div", {}, result, stored)));
  replace(result, h("h3", { id: "resolved-h" }, "Resolved scope"), h("p", {}, "Pick projects: the resolved set appears here as you type."));
  const aliases = new Map<string, string>();
  let seq = 0;
  const fillForm = (scope: ResourceScope) => {
    for (const box of projectsBox.querySelectorAll<HTMLInputElement>("input[name=projects]"))
      box.checked = scope.projectNames.includes(box.value);
    include.value = scope.includeResources.join("\n");
    exclude.value = scope.excludeResources.join("\n");
    includePaths.value = scope.includePaths.join("\n");
    excludePaths.value = scope.excludePaths.join("\n");
    temporal.value = scope.temporalScope;
    expand.checked = scope.expandDescendants;
  };
  const open = async (scopeId: string) => {
    const mine = ++seq;
    result.setAttribute("aria-busy", "true");
    try {
      const { scope } = await client().scope.getScope({ scopeId });
      if (!scope) return;
      await loadAliases(scope.projectNames, aliases);
      const refusal = scope.resourceIds.length === 0 ? await refusalOf(scope) : undefined;
      if (mine !== seq) return;
      fillForm(scope);
      showResolved(result, scope, aliases, refusal, () => void list.refresh());
    } catch (err) {
      if (mine === seq) replace(result, h("h3", { id: "resolved-h" }, "Resolved scope"), errorView(err));
    } finally {
      if (mine === seq) result.setAttribute("aria-busy", "false");
    }
    result.querySelector<HTMLElement>("#resolved-h")?.focus();
  };
  const list = storedList(stored, (id) => void open(id));
  void list.refresh();

  let projects: string[] = [];
  try {
    projects = (await allRows(listAllProjects(client(), { pageSize: 1000 }))).map((p) => p.name).sort();
  } catch (err) {
    replace(projectsBox, h("legend", {}, "Projects"), errorView(err));
    return;
  }
  replace(
    projectsBox,
    h("legend", {}, "Projects"),
    projects.length === 0 ? "This key sees no project." : null,
    projects.map((p, i) =>
      h(
        "div",
        { class: "checkbox" },
        h("input", { type: "checkbox", id: `project-${i}`, name: "projects", value: p }),
        h("label", { for: `project-${i}` }, p),
      ),
    ),
  );
  const resolve = async () => {
    const chosen = [...projectsBox.querySelectorAll<HTMLInputElement>("input[name=projects]:checked")].map((c) => c.value);
    const mine = ++seq;
    if (chosen.length === 0) {
      replace(result, h("h3", { id: "resolved-h" }, "Resolved scope"), h("p", {}, "Pick at least one project."));
      return;
    }
    result.setAttribute("aria-busy", "true");
    const request = {
      projects: chosen,
      includeResources: lines(include.value),
      excludeResources: lines(exclude.value),
      includePaths: lines(includePaths.value),
      excludePaths: lines(excludePaths.value),
      temporalScope: temporal.value,
      expandDescendants: expand.checked,
    };
    try {
      const [{ scope }] = await Promise.all([client().scope.resolveScope(request), loadAliases(chosen, aliases)]);
      if (mine !== seq || !scope) return;
      // An emptied scope is stored but refused on every call that uses it: ask the server for that refusal.
      const refusal = scope.resourceIds.length === 0 ? await refusalOf(scope) : undefined;
      if (mine !== seq) return;
      // The stored list first, so once the result shows, the list holds it too.
      await list.refresh();
      if (mine !== seq) return;
      showResolved(result, scope, aliases, refusal, () => void list.refresh());
    } catch (err) {
      if (mine !== seq) return;
      replace(result, h("h3", { id: "resolved-h" }, "Resolved scope"), errorView(err));
      announce("The scope was refused");
    } finally {
      if (mine === seq) result.setAttribute("aria-busy", "false");
    }
  };
  const later = debounce(() => void resolve(), RESOLVE_DEBOUNCE_MS);
  // `input` fires for text, checkboxes and selects alike; `change` would fire again on blur.
  form.addEventListener("input", later);
}

async function loadAliases(projects: string[], aliases: Map<string, string>): Promise<void> {
  await Promise.all(
    projects
      .filter((p) => !aliases.has(`project:${p}`))
      .map(async (p) => {
        const resources = await allRows(listAllResources(client(), p, { pageSize: 1000 }));
        aliases.set(`project:${p}`, "");
        for (const r of resources) aliases.set(r.id, aliases.has(r.id) ? `${aliases.get(r.id)}, ${p}:${r.alias}` : `${p}:${r.alias}`);
      }),
  );
}

function summary(s: StoredScope): string {
  const parts = [
    s.includeResources.length ? `allow ${s.includeResources.join(" ")}` : "",
    s.excludeResources.length ? `deny ${s.excludeResources.join(" ")}` : "",
    s.includePaths.length ? `paths ${s.includePaths.join(" ")}` : "",
    s.excludePaths.length ? `not ${s.excludePaths.join(" ")}` : "",
    s.temporalScope !== "current" ? s.temporalScope : "",
    s.expandDescendants ? "" : "no descendants",
    s.parentScopeId ? `narrowed from ${s.parentScopeId}` : "",
  ].filter((p) => p !== "");
  return parts.join("; ") || "everything in the projects";
}

async function refusalOf(scope: ResourceScope): Promise<unknown> {
  try {
    await client(scope.scopeId).scope.validateProjectScope({ requestedProjects: scope.projectNames });
    return undefined;
  } catch (err) {
    return err;
  }
}

function showResolved(result: HTMLElement, scope: ResourceScope, aliases: Map<string, string>, refusal: unknown, onUse: () => void): void {
  const list = pagedList(
    scope.resourceIds,
    (id) => h("li", {}, h("code", {}, id), " ", h("span", { class: "alias" }, aliases.get(id) ?? "")),
    { label: "Resolved resources" },
  );
  list.body.id = "resolved-resources";
  const use = h(
    "button",
    {
      type: "button",
      class: "primary",
      onclick: () => {
        setScopeId(scope.scopeId);
        use.textContent = "In use for search and tiers";
        onUse();
        announce("Scope in use");
      },
    },
    getScopeId() === scope.scopeId ? "In use for search and tiers" : "Use this scope",
  );
  replace(
    result,
    h("h3", { id: "resolved-h", tabindex: -1 }, `Resolved scope: ${plural(scope.resourceIds.length, "resource")}`),
    h(
      "dl",
      { class: "kv" },
      h("dt", {}, "scope_id"),
      h("dd", {}, h("code", { id: "resolved-scope-id" }, scope.scopeId)),
      h("dt", {}, "Projects"),
      h("dd", {}, scope.projectNames.join(", ")),
      h("dt", {}, "Temporal"),
      h("dd", {}, scope.temporalScope),
      h("dt", {}, "Allow"),
      h("dd", {}, scope.includeResources.join(", ") || "everything in the projects"),
      h("dt", {}, "Deny"),
      h("dd", {}, scope.excludeResources.join(", ") || "nothing"),
      h("dt", {}, "Descendants"),
      h("dd", {}, scope.expandDescendants ? "expanded" : "only the linked resources"),
      h("dt", {}, "Paths"),
      h(
        "dd",
        {},
        [
          scope.includePaths.length ? `include ${scope.includePaths.join(", ")}` : "all",
          scope.excludePaths.length ? `; exclude ${scope.excludePaths.join(", ")}` : "",
        ].join(""),
      ),
    ),
    refusal === undefined
      ? [use, h("h4", {}, "Resources in the scope"), list.body, list.pager]
      : [h("p", {}, "This scope holds no resource: every call that uses it is refused."), errorView(refusal)],
  );
  announce(`Scope resolved: ${plural(scope.resourceIds.length, "resource")}`);
}

/** When a scope was made, in the browser's time zone, to the second: `2026-12-01 16:18:21`. */
function made(iso: string): string {
  const d = new Date(iso);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/**
 * The key's stored scopes, newest first, STORED_PAGE_SIZE per page from the server: Previous/Next walk the
 * server's page tokens, so no page ever holds more rows than one page. `refresh` goes back to the first page.
 */
function storedList(stored: HTMLElement, open: (scopeId: string) => void): { refresh: () => Promise<void> } {
  // tokens[i] starts page i; the first page starts at "".
  let tokens = [""];
  let page = 0;
  let seq = 0;
  const show = async (p: number) => {
    const mine = ++seq;
    stored.setAttribute("aria-busy", "true");
    try {
      const answer = await storedScopes(tokens[p]);
      if (mine !== seq) return;
      page = p;
      tokens = tokens.slice(0, p + 1);
      if (answer.nextPageToken !== "") tokens.push(answer.nextPageToken);
      render(answer.scopes);
    } catch (err) {
      if (mine === seq) replace(stored, h("h3", { id: "stored-h" }, "Stored scopes of this key"), errorView(err));
    } finally {
      if (mine === seq) stored.setAttribute("aria-busy", "false");
    }
  };
  const render = (scopes: StoredScope[]) => {
    const current = getScopeId();
    const prev = h("button", { type: "button", disabled: page === 0, onclick: () => void show(page - 1) }, "Previous page");
    const next = h("button", { type: "button", disabled: page + 1 >= tokens.length, onclick: () => void show(page + 1) }, "Next page");
    replace(
      stored,
      h("h3", { id: "stored-h" }, "Stored scopes of this key"),
      h("p", { class: "hint" }, "Every scope this key resolved or narrowed, from any client, newest first. Open one to see what it holds."),
      scopes.length === 0
        ? h("p", {}, page === 0 ? "None yet." : "No more scopes.")
        : h(
            "table",
            { class: "data", id: "stored-table" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["scope_id", "Projects", "Resources", "Filters", "Made", ""].map((c) => h("th", { scope: "col" }, c)),
              ),
            ),
            h(
              "tbody",
              {},
              scopes.map((s) =>
                h(
                  "tr",
                  { class: s.scopeId === current ? "current" : "", "data-scope-id": s.scopeId },
                  h("td", {}, h("code", {}, s.scopeId)),
                  h("td", {}, s.projectNames.join(", ")),
                  h("td", { class: "num" }, s.resourceCount),
                  h("td", {}, summary(s)),
                  h("td", { class: "when" }, h("time", { datetime: s.createdAt }, made(s.createdAt))),
                  h(
                    "td",
                    { class: "actions" },
                    h("button", { type: "button", "aria-label": `Open scope ${s.scopeId}`, onclick: () => open(s.scopeId) }, "Open"),
                    h(
                      "button",
                      {
                        type: "button",
                        "aria-label": `Use scope ${s.scopeId}`,
                        onclick: () => {
                          setScopeId(s.scopeId);
                          render(scopes);
                          announce("Scope in use");
                        },
                      },
                      s.scopeId === current ? "In use" : "Use",
                    ),
                  ),
                ),
              ),
            ),
          ),
      h(
        "div",
        { class: "pager", role: "group", "aria-label": "Stored scopes pages" },
        prev,
        h("span", { class: "page-status" }, `page ${page + 1}`),
        next,
      ),
    );
  };
  return { refresh: () => show(0) };
}
