import type { Resource } from "@acms/client/gen/acms/v1/registry_pb.js";
import { announce, debounce, field, h, replace } from "../dom.js";
import { errorView } from "../error-view.js";
import { pagedList } from "../paged-list.js";
import { resourceTree } from "../resource-tree.js";
import { client } from "../session.js";
import { allRows } from "../all-rows.js";
import { listAllProjects, listAllResources } from "@acms/client/web";
import { deleteProject, eraseResource, unlinkResource } from "../erasure.js";

/** How long typing in the resource filter must pause before the table is filtered again. */
const FILTER_DEBOUNCE_MS = 150;

/**
 * Projects the key may see, and a chosen project's resources drawn as their parent DAG with every alias.
 * The project's list is fetched once (every page of ListResources) and then paged (and filtered) here: the
 * DOM never holds more than a page of rows, however many resources the project has.
 */
export async function projectsPage(main: HTMLElement, outcome?: HTMLElement, selected?: string): Promise<void> {
  const select = h("select", { name: "project" });
  const detail = h("div", { id: "project-detail" });
  // What the last deletion did (its ErasureReport, or why nothing happened): kept above the refreshed page.
  const outcomeHolder = h("div", { id: "erasure-outcome" }, outcome);
  replace(main, h("h2", {}, "Projects and resources"), outcomeHolder, h("div", { id: "project-picker" }, "Loading projects…"), detail);
  /** After a deletion: the report first, then the listings again as the server now has them. */
  const done = (result: HTMLElement | undefined, project: string) => {
    if (result) void projectsPage(main, result, project).then(() => result.scrollIntoView?.({ block: "nearest" }));
  };
  let projects: string[];
  try {
    projects = (await allRows(listAllProjects(client(), { pageSize: 1000 }))).map((p) => p.name).sort();
  } catch (err) {
    replace(main.querySelector("#project-picker")!, errorView(err));
    return;
  }
  if (projects.length === 0) {
    replace(main.querySelector("#project-picker")!, h("p", {}, "This key sees no project yet."));
    return;
  }
  replace(
    select,
    projects.map((p) => h("option", { value: p }, p)),
  );
  if (selected !== undefined && projects.includes(selected)) select.value = selected;
  select.addEventListener("change", () => void showProject(select.value, detail, done));
  replace(main.querySelector("#project-picker")!, field(`Project (${projects.length} visible to this key)`, select));
  await showProject(select.value, detail, done);
}

async function showProject(
  project: string,
  detail: HTMLElement,
  done: (result: HTMLElement | undefined, project: string) => void,
): Promise<void> {
  replace(detail, h("p", {}, `Loading ${project}…`));
  let resources: Resource[];
  try {
    resources = await allRows(listAllResources(client(), project, { pageSize: 1000 }));
  } catch (err) {
    replace(detail, errorView(err));
    return;
  }
  const byId = new Map(resources.map((r) => [r.id, r]));
  const rows = resourceTree(resources);
  const tree = pagedList(
    rows,
    (row) =>
      h(
        "li",
        { class: `tree-row depth-${Math.min(row.depth, 8)}`, "data-depth": row.depth },
        h("span", { class: "tree-branch", "aria-hidden": "true" }, row.depth === 0 ? "" : "└ "),
        h("strong", {}, row.resource.alias || "(no alias)"),
        " ",
        h("span", { class: "kind" }, row.resource.kind),
        " ",
        h("code", { class: "id" }, row.resource.id),
        row.repeated ? h("em", { class: "repeat" }, " (drawn above: several parents)") : null,
        row.depth > 0 ? h("span", { class: "visually-hidden" }, ` level ${row.depth + 1}`) : null,
      ),
    { label: "Resource tree" },
  );
  tree.body.setAttribute("aria-label", `Resource DAG of ${project}`);
  tree.body.classList.add("tree");
  const sorted = [...resources].sort((a, b) => a.alias.localeCompare(b.alias));
  const filter = h("input", { type: "search", name: "resource_filter", autocomplete: "off", spellcheck: "false" });
  const tableHolder = h("div", { id: "resources-holder" });
  const showTable = () => {
    const needle = filter.value.trim().toLowerCase();
    const shown =
      needle === ""
        ? sorted
        : sorted.filter(
            (r) => r.alias.toLowerCase().includes(needle) || r.kind.toLowerCase().includes(needle) || r.id.toLowerCase().startsWith(needle),
          );
    const table = pagedList(
      shown,
      (r) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, r.alias),
          h("td", {}, r.kind),
          h("td", {}, h("code", {}, r.id)),
          h("td", {}, r.ownerProject),
          h("td", {}, r.parentIds.map((p) => byId.get(p)?.alias ?? p).join(", ") || "—"),
          h("td", {}, r.links.map((l) => `${l.project}: ${l.alias}`).join("; ")),
          h(
            "td",
            { class: "actions" },
            r.ownerProject !== project
              ? h(
                  "button",
                  {
                    type: "button",
                    "aria-label": `Unlink ${r.alias} from ${project}`,
                    onclick: async () => done(await unlinkResource(r, project), project),
                  },
                  "Unlink…",
                )
              : null,
            h(
              "button",
              {
                type: "button",
                class: "danger",
                "aria-label": `Erase resource ${r.alias}`,
                onclick: async () =>
                  done(
                    await eraseResource(
                      r,
                      project,
                      resources.filter((c) => c.parentIds.includes(r.id)),
                    ),
                    project,
                  ),
              },
              "Erase…",
            ),
          ),
        ),
      { label: "Resources", container: "tbody" },
    );
    replace(
      tableHolder,
      h(
        "table",
        { class: "data", id: "resources-table" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Alias here", "Kind", "Id", "Owner", "Parents", "Aliases in every project", "Delete"].map((c) => h("th", { scope: "col" }, c)),
          ),
        ),
        table.body,
      ),
      needle !== "" && shown.length === 0 ? h("p", {}, `No resource of ${project} matches “${filter.value.trim()}”.`) : null,
      table.pager,
    );
  };
  filter.addEventListener(
    "input",
    debounce(() => {
      showTable();
      announce(`${tableHolder.querySelectorAll("tbody tr").length} resources shown`);
    }, FILTER_DEBOUNCE_MS),
  );
  showTable();
  const deleteButton = h(
    "button",
    { type: "button", class: "danger", onclick: async () => done(await deleteProject(project, resources), project) },
    `Delete project ${project}…`,
  );
  replace(
    detail,
    h("div", { class: "project-actions" }, deleteButton),
    h(
      "section",
      { "aria-labelledby": "dag-h" },
      h("h3", { id: "dag-h" }, `Parent DAG of ${project} (${resources.length} resources)`),
      tree.body,
      tree.pager,
    ),
    h(
      "section",
      { "aria-labelledby": "aliases-h" },
      h("h3", { id: "aliases-h" }, "Aliases per project"),
      field("Filter resources (alias or kind contains, or id starts with)", filter),
      tableHolder,
    ),
  );
  announce(`${resources.length} resources in ${project}`);
}
