import type { GetMetricsResponse } from "@acms/client/gen/acms/v1/tiers_pb.js";
import { announce, field, h, replace } from "../dom.js";
import { errorView } from "../error-view.js";
import { client, getScopeId } from "../session.js";

/**
 * The context tiers of one project: populations, tokens, budgets and hit rates from GetMetrics, asked
 * under a child scope narrowed to that project (GetMetrics counts only what the call's scope sees).
 */
export async function tiersPage(main: HTMLElement): Promise<void> {
  const scopeId = getScopeId();
  if (!scopeId) {
    replace(
      main,
      h("h2", {}, "Context tiers"),
      h("p", {}, "No scope in use yet: ", h("a", { href: "#scope" }, "build a scope"), " first."),
    );
    return;
  }
  const out = h("section", { id: "tier-metrics", "aria-live": "polite" });
  replace(main, h("h2", {}, "Context tiers"), h("div", { id: "tier-picker" }, "Loading the scope…"), out);
  let projects: string[];
  try {
    projects = (await client().scope.getScope({ scopeId })).scope?.projectNames ?? [];
  } catch (err) {
    replace(main.querySelector("#tier-picker")!, errorView(err));
    return;
  }
  const select = h(
    "select",
    { name: "project" },
    projects.map((p) => h("option", { value: p }, p)),
  );
  const refresh = h("button", { type: "button", onclick: () => void show() }, "Refresh");
  const show = async () => {
    replace(out, h("p", {}, `Loading the tiers of ${select.value}…`));
    try {
      const { scope } = await client(scopeId).scope.narrowScope({ projects: [select.value] });
      const metrics = await client(scope!.scopeId).tiers.getMetrics({});
      replace(out, metricsView(select.value, metrics));
      announce(`Tiers of ${select.value} loaded`);
    } catch (err) {
      replace(out, errorView(err));
    }
  };
  select.addEventListener("change", () => void show());
  replace(main.querySelector("#tier-picker")!, h("div", { class: "inline" }, field("Project of the scope", select), refresh));
  if (projects.length > 0) await show();
}

function rate(hits: bigint, misses: bigint): string {
  const total = hits + misses;
  return total === 0n ? "no reads yet" : `${((Number(hits) / Number(total)) * 100).toFixed(1)} % (${hits} of ${total})`;
}

function metricsView(project: string, m: GetMetricsResponse): HTMLElement {
  const tiers: [string, bigint, bigint, string, string][] = [
    ["hot", m.hotPopulation, m.hotTokens, budget(m.hotMaxTokens, "tokens", m.hotTokens), rate(m.hotHits, m.hotMisses)],
    ["warm", m.warmPopulation, m.warmTokens, budget(m.warmMaxDecisions, "fragments", m.warmPopulation), rate(m.warmHits, m.warmMisses)],
    ["cold", m.coldPopulation, m.coldTokens, budget(m.coldMaxDecisions, "fragments", m.coldPopulation), rate(m.coldHits, m.misses)],
  ];
  return h(
    "div",
    {},
    h("h3", {}, `Tiers of ${project}`),
    h(
      "table",
      { class: "data", id: "tiers-table" },
      h("caption", {}, "Population, tokens, budget (per project) and GetFragment hit rate per tier"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["Tier", "Population", "Tokens", "Budget", "Hit rate"].map((c) =>
            h("th", { scope: "col", class: c === "Population" || c === "Tokens" ? "num" : undefined }, c),
          ),
        ),
      ),
      h(
        "tbody",
        {},
        tiers.map(([name, pop, tokens, b, r]) =>
          h(
            "tr",
            { "data-tier": name },
            h("th", { scope: "row" }, name),
            h("td", { class: "num" }, String(pop)),
            h("td", { class: "num" }, String(tokens)),
            h("td", {}, b),
            h("td", {}, r),
          ),
        ),
      ),
    ),
    h(
      "dl",
      { class: "kv" },
      h("dt", {}, "Promotions"),
      h("dd", {}, String(m.promotions)),
      h("dt", {}, "Demotions"),
      h("dd", {}, String(m.demotions)),
      h("dt", {}, "Evictions"),
      h("dd", {}, String(m.evictions)),
    ),
  );
}

function budget(max: bigint, unit: string, used: bigint): string {
  return max === 0n ? "not reported" : `${used} of ${max} ${unit}`;
}
