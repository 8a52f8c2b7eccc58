import { Code, ConnectError, findFieldViolations, findScopeViolation } from "@acms/client/web";
import { h } from "./dom.js";

/**
 * Shows why a call failed as what it is: a refusal with its ScopeViolation (the offending resource ids and
 * projects, and the projects the scope holds), field violations of a bad request, or the code and message.
 */
export function errorView(err: unknown): HTMLElement {
  const violation = findScopeViolation(err);
  if (violation) {
    return h(
      "section",
      { class: "error refusal", role: "alert", "aria-label": "Refused: scope violation" },
      h("h3", {}, "Refused: outside the scope (PERMISSION_DENIED, ScopeViolation)"),
      h("p", {}, violation.reason || (err instanceof ConnectError ? err.rawMessage : "")),
      h(
        "dl",
        { class: "kv" },
        h("dt", {}, "Offending resource ids"),
        h("dd", { class: "violation-resources" }, list(violation.resourceIds)),
        h("dt", {}, "Offending projects"),
        h("dd", { class: "violation-projects" }, list(violation.projectNames)),
        h("dt", {}, "Projects of the scope"),
        h("dd", { class: "violation-scope-projects" }, list(violation.scopeProjectNames)),
      ),
    );
  }
  if (err instanceof ConnectError) {
    const fields = findFieldViolations(err);
    return h(
      "section",
      { class: "error", role: "alert" },
      h("h3", {}, `${Code[err.code] ?? "Error"}`),
      h("p", {}, err.rawMessage),
      fields.length > 0
        ? h(
            "ul",
            {},
            fields.map((f) => h("li", {}, h("code", {}, f.field), ": ", f.description)),
          )
        : null,
    );
  }
  return h(
    "section",
    { class: "error", role: "alert" },
    h("h3", {}, "Error"),
    h("p", {}, err instanceof Error ? err.message : String(err)),
  );
}

function list(items: readonly string[]): HTMLElement | string {
  return items.length === 0
    ? "none"
    : h(
        "ul",
        { class: "plain" },
        items.map((i) => h("li", {}, h("code", {}, i))),
      );
}
