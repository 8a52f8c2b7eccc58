import type { ErasureReport, Resource } from "@acms/client/gen/acms/v1/registry_pb.js";
import { Code, ConnectError } from "@acms/client/web";
import { confirmDialog } from "./confirm-dialog.js";
import { announce, h, plural, type Child } from "./dom.js";
import { errorView } from "./error-view.js";
import { client } from "./session.js";

/**
 * Deleting from the console: DeleteResource, UnlinkResource and DeleteProject, each asked for through the same
 * RPCs (and so the same key check and access rules) as any client, each behind a confirmation naming what goes.
 * Each returns the section to show afterwards (the ErasureReport, the removed link or why nothing happened),
 * or undefined when the operator cancelled (then no call was made).
 */

/** What goes with any erased resource (the counts are known only once it went: the report gives them). */
const ERASED_KINDS =
  "every document and each of its retained versions, its chunks, keyword-index entries and vectors, its graph triples, " +
  "the tier fragments that name it (cold files included), and its links and aliases in every project.";

/** `project:alias` of each link, for naming a resource everywhere it is seen. */
function linksOf(r: Resource): string {
  return r.links.map((l) => `${l.project}:${l.alias}`).join(", ") || "none";
}

function kv(rows: Array<[string, Child]>): HTMLElement {
  return h(
    "dl",
    { class: "kv" },
    rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
  );
}

/** The erasure report, one row per kind, as the server counted it. */
export function reportView(title: string, report: ErasureReport | undefined): HTMLElement {
  const r = report;
  const rows: Array<[string, string, bigint]> = r
    ? [
        ["documents", "documents (every retained version counts)", r.documents],
        ["chunks", "chunks", r.chunks],
        ["vectors", "vectors", r.vectors],
        ["triples", "graph triples", r.triples],
        ["fragments", "tier fragments", r.fragments],
        ["links", "project links (aliases)", r.links],
        ["files", "files (cold-tier copies, saved index files)", r.files],
      ]
    : [];
  return h(
    "section",
    { class: "erasure-report", role: "status", "aria-label": "Erasure report" },
    h("h3", {}, title),
    h(
      "table",
      { class: "data", id: "erasure-report-table" },
      h("caption", {}, "What the erasure removed, per kind"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Kind"), h("th", { scope: "col", class: "num" }, "Removed"))),
      h(
        "tbody",
        {},
        rows.map(([kind, label, n]) =>
          h("tr", { "data-kind": kind }, h("th", { scope: "row" }, label), h("td", { class: "num" }, String(n))),
        ),
      ),
    ),
    kv([
      ["Index generation after it", String(r?.indexGeneration ?? 0n)],
      [
        "Resources erased",
        (r?.resourceIds.length ?? 0) === 0
          ? "none"
          : h(
              "ul",
              { class: "plain", id: "erased-resources" },
              r!.resourceIds.map((id) => h("li", {}, h("code", {}, id))),
            ),
      ],
    ]),
  );
}

/** Why nothing (or maybe not everything) happened: a refusal changes nothing; a failed call may be retried. */
function failureView(action: string, err: unknown): HTMLElement {
  const refused =
    err instanceof ConnectError &&
    [Code.PermissionDenied, Code.FailedPrecondition, Code.NotFound, Code.InvalidArgument, Code.Unauthenticated].includes(err.code);
  const hint =
    err instanceof ConnectError && err.code === Code.FailedPrecondition && action.startsWith("Deleting project")
      ? "The project still owns resources: tick “Also erase the resources it owns (cascade)” to erase them with it, or delete them first."
      : err instanceof ConnectError && err.code === Code.PermissionDenied
        ? "This key may not do it: erasing needs write access to the owning project (a read-only key is refused)."
        : undefined;
  return h(
    "section",
    { class: "erasure-failed", "aria-label": `${action} failed` },
    h(
      "h3",
      {},
      refused ? `${action}: refused, nothing was deleted` : `${action} failed: retry it (a retried erasure completes one that began)`,
    ),
    hint ? h("p", { class: "hint-strong" }, hint) : null,
    errorView(err),
  );
}

/** DeleteResource after a confirmation naming the resource, where it is seen and what goes with it. */
export async function eraseResource(r: Resource, project: string, children: Resource[]): Promise<HTMLElement | undefined> {
  const name = r.alias || r.id;
  const ok = await confirmDialog({
    title: `Erase resource ${name}?`,
    confirmLabel: `Erase ${name}`,
    body: [
      kv([
        ["Resource", h("strong", { class: "confirm-name" }, `${project}:${r.alias}`)],
        ["Id", h("code", { class: "confirm-id" }, r.id)],
        ["Kind", r.kind || "—"],
        ["Owning project", h("span", { class: "confirm-owner" }, r.ownerProject)],
        ["Linked as", h("span", { class: "confirm-links" }, linksOf(r))],
        ["Children that lose it as a parent", children.length === 0 ? "none" : children.map((c) => c.alias || c.id).join(", ")],
      ]),
      h("p", {}, "Erased everywhere, on every engine: ", ERASED_KINDS),
      h("p", { class: "hint" }, "How many documents, chunks and vectors go is counted as they go: the report after the erasure says."),
      h("p", {}, h("strong", {}, "This cannot be undone.")),
    ],
  });
  if (!ok) return undefined;
  try {
    const { report } = await client().registry.deleteResource({ resourceId: r.id });
    announce(`Erased ${name}: ${plural(Number(report?.documents ?? 0n), "document")}, ${plural(Number(report?.chunks ?? 0n), "chunk")}`);
    return reportView(`Erased resource ${project}:${r.alias} (${r.id})`, report);
  } catch (err) {
    announce(`Erasing ${name} failed`);
    return failureView(`Erasing ${project}:${r.alias}`, err);
  }
}

/** UnlinkResource after a confirmation: only the link goes, the resource stays in its owning project. */
export async function unlinkResource(r: Resource, project: string): Promise<HTMLElement | undefined> {
  const ok = await confirmDialog({
    title: `Unlink ${r.alias} from ${project}?`,
    confirmLabel: `Unlink ${r.alias}`,
    body: [
      kv([
        ["Link removed", h("strong", { class: "confirm-name" }, `${project}:${r.alias}`)],
        ["Resource id", h("code", { class: "confirm-id" }, r.id)],
        ["Stays in its owning project", h("span", { class: "confirm-owner" }, r.ownerProject)],
      ]),
      h(
        "p",
        {},
        `Only the link goes: ${project} no longer sees the resource under “${r.alias}”; its documents, vectors and triples stay in ${r.ownerProject}.`,
      ),
    ],
  });
  if (!ok) return undefined;
  try {
    const { link } = await client().registry.unlinkResource({ project, resourceId: r.id });
    announce(`Unlinked ${r.alias} from ${project}`);
    return h(
      "section",
      { class: "erasure-report", role: "status", "aria-label": "Unlink report" },
      h("h3", {}, `Unlinked ${link?.project ?? project}:${link?.alias ?? r.alias}`),
      kv([
        ["Resource id", h("code", {}, link?.resourceId ?? r.id)],
        ["Still owned by", r.ownerProject],
      ]),
    );
  } catch (err) {
    announce(`Unlinking ${r.alias} failed`);
    return failureView(`Unlinking ${project}:${r.alias}`, err);
  }
}

/**
 * DeleteProject after a confirmation naming the resources it owns (erased only when cascade is ticked; without,
 * the server refuses while it owns any) and the links of other projects' resources into it (removed).
 */
export async function deleteProject(project: string, resources: Resource[]): Promise<HTMLElement | undefined> {
  const owned = resources.filter((r) => r.ownerProject === project);
  const linked = resources.filter((r) => r.ownerProject !== project);
  const cascade = h("input", { type: "checkbox", name: "cascade", id: "delete-project-cascade" });
  const ok = await confirmDialog({
    title: `Delete project ${project}?`,
    confirmLabel: `Delete ${project}`,
    body: [
      kv([
        ["Project", h("strong", { class: "confirm-name" }, project)],
        [
          `Resources it owns (${owned.length})`,
          owned.length === 0
            ? "none"
            : h(
                "ul",
                { class: "plain confirm-owned" },
                owned.map((r) => h("li", {}, `${r.alias} `, h("code", {}, r.id))),
              ),
        ],
        [
          `Links of other projects' resources (${linked.length}, removed; the resources stay)`,
          linked.length === 0
            ? "none"
            : h(
                "ul",
                { class: "plain confirm-linked" },
                linked.map((r) => h("li", {}, `${r.alias} (owned by ${r.ownerProject}) `, h("code", {}, r.id))),
              ),
        ],
      ]),
      owned.length > 0
        ? h(
            "div",
            { class: "checkbox" },
            cascade,
            h("label", { for: cascade.id }, `Also erase the ${plural(owned.length, "resource")} it owns (cascade): `, ERASED_KINDS),
          )
        : null,
      owned.length > 0
        ? h(
            "p",
            { class: "hint" },
            "Without cascade the server refuses to delete a project that still owns resources (FAILED_PRECONDITION).",
          )
        : null,
      h("p", {}, h("strong", {}, "This cannot be undone.")),
    ],
  });
  if (!ok) return undefined;
  try {
    const { report } = await client().registry.deleteProject({ name: project, cascade: cascade.checked });
    announce(`Deleted project ${project}`);
    return reportView(`Deleted project ${project}${cascade.checked ? " with the resources it owned" : ""}`, report);
  } catch (err) {
    announce(`Deleting project ${project} failed`);
    return failureView(`Deleting project ${project}`, err);
  }
}
