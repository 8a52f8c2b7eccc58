import type { ResourceScope } from "@acms/client/gen/acms/v1/scope_pb.js";
import { announce, debounce, field, h, lines, replace } from "../dom.js";
import { errorView } from "../error-view.js";
import { pagedList } from "../paged-list.js";
import { client, getScopeId, madeScopes, rememberScope, setScopeId } from "../session.js";

/** How long typing must pause before the scope is resolved again. */
const RESOLVE_DEBOUNCE_MS = 300;

/**
 * The scope builder: projects, allow/deny lists and path globs; every change resolves the scope on the
 * server (debounced) and shows the resolved resource set live, or the refusal. Below, the scopes this tab made.
 */
export async function scopePage(main: HTMLElement): Promise<void> {
  const projectsBox = h("fieldset", { class: "projects" }, h("legend", {}, "Projects"), "Loading…");
  const include = h("textarea", { name: "include_resources", rows: 3, spellcheck: "false" });
  const exclude = h("textarea", { name: "exclude_resources", rows: 3, spellcheck: "false" });
  const includePaths = h("textarea", { name: "include_paths", rows: 2, spellcheck: "false" });
  const excludePaths = h("textarea", { name: "exclude_paths", rows: 2, spellcheck: "false" });
  const temporal = h("select", { name: "temporal_scope" }, ["current", "recent", "all"].map((t) => h("option", { value: t }, t)));
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
  showStored(stored);

  let projects: string[] = [];
  try {
    projects = (await client().registry.listProjects({})).projects.map((p) => p.name).sort();
  } catch (err) {
    replace(projectsBox, h("legend", {}, "Projects"), errorView(err));
    return;
  }
  replace(
    projectsBox,
    h("legend", {}, "Projects"),
    projects.length === 0 ? "This key sees no project." : null,
    projects.map((p, i) => h("div", { class: "checkbox" }, h("input", { type: "checkbox", id: `project-${i}`, name: "projects", value: p }), h("label", { for: `project-${i}` }, p))),
  );
  const aliases = new Map<string, string>();
  let seq = 0;
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
      showResolved(result, scope, aliases, refusal, () => showStored(stored));
      rememberScope({ scopeId: scope.scopeId, projects: scope.projectNames, resourceCount: scope.resourceIds.length, summary: summary(request) });
      showStored(stored);
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
  replace(result, h("h3", { id: "resolved-h" }, "Resolved scope"), h("p", {}, "Pick projects: the resolved set appears here as you type."));
}

async function loadAliases(projects: string[], aliases: Map<string, string>): Promise<void> {
  await Promise.all(
    projects
      .filter((p) => !aliases.has(`project:${p}`))
      .map(async (p) => {
        const { resources } = await client().registry.listResources({ project: p });
        aliases.set(`project:${p}`, "");
        for (const r of resources) aliases.set(r.id, aliases.has(r.id) ? `${aliases.get(r.id)}, ${p}:${r.alias}` : `${p}:${r.alias}`);
      }),
  );
}

function summary(req: { includeResources: string[]; excludeResources: string[]; includePaths: string[]; excludePaths: string[]; temporalScope: string }): string {
  const parts = [
    req.includeResources.length ? `allow ${req.includeResources.join(" ")}` : "",
    req.excludeResources.length ? `deny ${req.excludeResources.join(" ")}` : "",
    req.includePaths.length ? `paths ${req.includePaths.join(" ")}` : "",
    req.excludePaths.length ? `not ${req.excludePaths.join(" ")}` : "",
    req.temporalScope !== "current" ? req.temporalScope : "",
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
  const use = h("button", { type: "button", class: "primary", onclick: () => { setScopeId(scope.scopeId); use.textContent = "In use for search and tiers"; onUse(); announce("Scope in use"); } }, getScopeId() === scope.scopeId ? "In use for search and tiers" : "Use this scope");
  replace(
    result,
    h("h3", { id: "resolved-h" }, `Resolved scope: ${scope.resourceIds.length} resources`),
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
      h("dd", {}, [scope.includePaths.length ? `include ${scope.includePaths.join(", ")}` : "all", scope.excludePaths.length ? `; exclude ${scope.excludePaths.join(", ")}` : ""].join("")),
    ),
    refusal === undefined ? [use, h("h4", {}, "Resources in the scope"), list.body, list.pager] : [h("p", {}, "This scope holds no resource: every call that uses it is refused."), errorView(refusal)],
  );
  announce(`Scope resolved: ${scope.resourceIds.length} resources`);
}

function showStored(stored: HTMLElement): void {
  const scopes = madeScopes();
  const current = getScopeId();
  replace(
    stored,
    h("h3", { id: "stored-h" }, "Scopes made in this tab"),
    h("p", { class: "hint" }, "The API has no RPC listing a key's stored scopes, so this lists the ones this tab resolved (newest first)."),
    scopes.length === 0
      ? h("p", {}, "None yet.")
      : h(
          "table",
          { class: "data" },
          h("thead", {}, h("tr", {}, ["scope_id", "Projects", "Resources", "Filters", ""].map((c) => h("th", { scope: "col" }, c)))),
          h(
            "tbody",
            {},
            scopes.map((s) =>
              h(
                "tr",
                { class: s.scopeId === current ? "current" : "" },
                h("td", {}, h("code", {}, s.scopeId)),
                h("td", {}, s.projects.join(", ")),
                h("td", {}, s.resourceCount),
                h("td", {}, s.summary),
                h("td", {}, h("button", { type: "button", "aria-label": `Use scope ${s.scopeId}`, onclick: () => { setScopeId(s.scopeId); showStored(stored); announce("Scope in use"); } }, s.scopeId === current ? "In use" : "Use")),
              ),
            ),
          ),
        ),
  );
}
