import { TermKind, type Term } from "@acms/client/gen/acms/v1/graph_pb.js";
import { Source } from "@acms/client/gen/acms/v1/rag_pb.js";
import { announce, field, h, plural, replace } from "../dom.js";
import { errorView } from "../error-view.js";
import { pagedList } from "../paged-list.js";
import { client, getScopeId } from "../session.js";

type Mode = "text" | "vector" | "graph" | "hybrid";

/** One row of the results table, whichever mode answered. */
interface ResultRow {
  ukoUri: string;
  path: string;
  score: number;
  content: string;
  contributions: { source: string; rank: number; score: number }[];
}

/** What every scoped answer says about itself. */
interface AnswerFlags {
  scopeId: string;
  exhaustive: boolean;
  indexGeneration: bigint;
  partial?: boolean;
  failedSources?: string[];
}

const SOURCES: [Source, string][] = [
  [Source.TEXT, "text"],
  [Source.VECTOR, "vector"],
  [Source.GRAPH, "graph"],
];

/**
 * The search playground inside the tab's scope: text, vector (the query text, which a server with an embedder
 * embeds, or a pasted embedding), graph (SPARQL, rows as a
 * table) and hybrid, showing each fused result's per-source ranks and scores and the answer's
 * `exhaustive`/`index_generation` flags; any result (or any URI) can be fetched with FetchContent.
 */
export function searchPage(main: HTMLElement): void {
  const scopeId = getScopeId();
  if (!scopeId) {
    replace(
      main,
      h("h2", {}, "Search playground"),
      h("p", {}, "No scope in use yet: ", h("a", { href: "#scope" }, "build a scope"), " first."),
    );
    return;
  }
  let mode: Mode = "hybrid";
  const modes = h(
    "fieldset",
    { class: "modes" },
    h("legend", {}, "Mode"),
    (["text", "vector", "graph", "hybrid"] as Mode[]).map((m) =>
      h(
        "span",
        { class: "checkbox" },
        h("input", { type: "radio", name: "mode", id: `mode-${m}`, value: m, checked: m === mode }),
        h("label", { for: `mode-${m}` }, m),
      ),
    ),
  );
  const query = h("input", { type: "search", name: "query", autocomplete: "off" });
  const embedding = h("textarea", { name: "embedding", rows: 3, spellcheck: "false" });
  const sparql = h("textarea", { name: "sparql", rows: 5, spellcheck: "false", value: "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 50" });
  const max = h("input", { type: "number", name: "max_results", min: 1, max: 1000, value: 20 });
  const sources = h(
    "fieldset",
    { class: "sources" },
    h("legend", {}, "Hybrid sources (none ticked: every source that applies)"),
    SOURCES.map(([s, name]) =>
      h(
        "span",
        { class: "checkbox" },
        h("input", { type: "checkbox", id: `source-${name}`, name: "sources", value: s }),
        h("label", { for: `source-${name}` }, name),
      ),
    ),
  );
  const maxField = field("Max results (top_k)", max);
  const queryField = field("Query", query);
  const embeddingField = field(
    "Embedding (optional when the server embeds: left empty, the text above is sent; else paste floats, a JSON array or comma/space separated)",
    embedding,
  );
  const sparqlField = field("SPARQL (SELECT, ASK, CONSTRUCT, DESCRIBE)", sparql);
  const flags = h("section", { id: "answer-flags", "aria-label": "Answer flags" });
  const results = h("section", { id: "results", "aria-label": "Results", "aria-busy": "false" });
  const fetchUri = h("input", { type: "text", name: "uko_uri", spellcheck: "false", placeholder: "uko://<resource-id>/<path>" });
  const fetched = h("section", { id: "fetched", "aria-labelledby": "fetch-h" });
  const showFields = () => {
    queryField.hidden = mode === "graph";
    embeddingField.hidden = mode === "text" || mode === "graph";
    sparqlField.hidden = mode !== "graph";
    sources.hidden = mode !== "hybrid";
    maxField.hidden = mode === "graph";
  };
  modes.addEventListener("change", () => {
    mode = (modes.querySelector<HTMLInputElement>("input[name=mode]:checked")?.value ?? "hybrid") as Mode;
    showFields();
  });
  const fetchOne = async (uri: string) => {
    replace(fetched, h("h3", { id: "fetch-h" }, "FetchContent"), h("p", {}, `Fetching ${uri}…`));
    try {
      const answer = await client(scopeId).rag.fetchContent({ ukoUris: [uri] });
      replace(
        fetched,
        h("h3", { id: "fetch-h" }, "FetchContent"),
        flagsView({ scopeId: answer.scopeId, exhaustive: answer.exhaustive, indexGeneration: answer.indexGeneration }),
        answer.items.map((item) =>
          h(
            "article",
            { class: "fetched-item" },
            h("h4", {}, item.ukoUri),
            h("p", { class: "hint" }, `${item.path}${item.chunkIndex !== undefined ? ` (chunk ${item.chunkIndex})` : ""}`),
            h("pre", {}, item.content),
          ),
        ),
        answer.missing.length ? h("p", {}, "Missing (in scope, no such unit): ", answer.missing.join(", ")) : null,
      );
      announce("Content fetched");
    } catch (err) {
      replace(fetched, h("h3", { id: "fetch-h" }, "FetchContent"), errorView(err));
      announce("Fetch refused");
    }
    fetched.scrollIntoView({ block: "nearest" });
  };
  const run = async () => {
    results.setAttribute("aria-busy", "true");
    replace(flags);
    replace(results, h("p", {}, "Searching…"));
    try {
      await search(
        mode,
        {
          query: query.value,
          embedding: embedding.value,
          sparql: sparql.value,
          max: Number(max.value),
          sources: [...sources.querySelectorAll<HTMLInputElement>("input:checked")].map((c) => Number(c.value) as Source),
        },
        scopeId,
        flags,
        results,
        fetchOne,
      );
    } catch (err) {
      replace(results, errorView(err));
      announce("Search refused");
    } finally {
      results.setAttribute("aria-busy", "false");
    }
  };
  const form = h(
    "form",
    {
      class: "search-form",
      "aria-label": "Search",
      onsubmit: (e: Event) => {
        e.preventDefault();
        void run();
      },
    },
    modes,
    queryField,
    embeddingField,
    sparqlField,
    sources,
    maxField,
    h("button", { type: "submit", class: "primary" }, "Search"),
  );
  const fetchForm = h(
    "form",
    {
      class: "fetch-form",
      "aria-label": "Fetch a URI",
      onsubmit: (e: Event) => {
        e.preventDefault();
        void fetchOne(fetchUri.value.trim());
      },
    },
    field("Fetch any UKO URI", fetchUri),
    h("button", { type: "submit" }, "Fetch"),
  );
  showFields();
  replace(
    main,
    h("h2", {}, "Search playground"),
    h("p", { class: "hint" }, "Scope in use: ", h("code", { id: "search-scope" }, scopeId)),
    h("div", { class: "two-col" }, h("div", {}, form, fetchForm), h("div", {}, flags, results, fetched)),
  );
}

async function search(
  mode: Mode,
  input: { query: string; embedding: string; sparql: string; max: number; sources: Source[] },
  scopeId: string,
  flagsEl: HTMLElement,
  resultsEl: HTMLElement,
  fetchOne: (uri: string) => void,
): Promise<void> {
  const acms = client(scopeId);
  const max = Number.isFinite(input.max) ? Math.trunc(input.max) : undefined;
  if (mode === "graph") {
    const answer = await acms.graph.sparqlQuery({ query: input.sparql });
    replace(flagsEl, flagsView(answer));
    if (answer.variables.length > 0) {
      const rows = pagedList(
        answer.rows,
        (row) =>
          h(
            "tr",
            {},
            answer.variables.map((v) => h("td", {}, termView(row.bindings[v]))),
          ),
        { label: "Solutions", container: "tbody" },
      );
      replace(
        resultsEl,
        h("h3", {}, plural(answer.rows.length, "solution")),
        h(
          "table",
          { class: "data", id: "sparql-table" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              answer.variables.map((v) => h("th", { scope: "col" }, `?${v}`)),
            ),
          ),
          rows.body,
        ),
        rows.pager,
      );
    } else if (answer.triples.length > 0) {
      const rows = pagedList(
        answer.triples,
        (t) =>
          h(
            "tr",
            {},
            [t.subject, t.predicate, t.object].map((term) => h("td", {}, termView(term))),
          ),
        { label: "Triples", container: "tbody" },
      );
      replace(
        resultsEl,
        h("h3", {}, plural(answer.triples.length, "triple")),
        h(
          "table",
          { class: "data", id: "sparql-table" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["subject", "predicate", "object"].map((c) => h("th", { scope: "col" }, c)),
            ),
          ),
          rows.body,
        ),
        rows.pager,
      );
    } else {
      replace(resultsEl, h("h3", {}, "ASK"), h("p", { id: "sparql-boolean" }, String(answer.boolean)));
    }
    announce("Graph query answered");
    return;
  }
  let rows: ResultRow[];
  if (mode === "text") {
    const answer = await acms.text.search({ query: input.query, maxResults: max });
    replace(flagsEl, flagsView(answer));
    rows = answer.results.map((r, i) => ({
      ukoUri: r.ukoUri,
      path: r.path,
      score: r.score,
      content: r.content,
      contributions: [{ source: "text", rank: i + 1, score: r.score }],
    }));
  } else if (mode === "vector") {
    // A pasted embedding wins; without one the server embeds the query text (FAILED_PRECONDITION when it has no embedder).
    const answer = await acms.vector.similaritySearch(
      input.embedding.trim() === "" ? { text: input.query, topK: max } : { embedding: parseEmbedding(input.embedding), topK: max },
    );
    replace(flagsEl, flagsView(answer));
    rows = answer.results.map((r, i) => ({
      ukoUri: r.ukoUri,
      path: r.path,
      score: r.score,
      content: r.content,
      contributions: [{ source: "vector", rank: i + 1, score: r.score }],
    }));
  } else {
    const embedding = input.embedding.trim() === "" ? [] : parseEmbedding(input.embedding);
    const answer = await acms.rag.hybridSearch({ query: input.query, embedding, topK: max, sources: input.sources });
    replace(flagsEl, flagsView({ ...answer, failedSources: answer.failedSources.map(sourceName) }));
    rows = answer.results.map((r) => ({
      ukoUri: r.ukoUri,
      path: r.path,
      score: r.score,
      content: r.content,
      contributions: r.contributions.map((c) => ({ source: sourceName(c.source), rank: c.rank, score: c.score })),
    }));
  }
  const list = pagedList(
    rows,
    (r, i) =>
      h(
        "tr",
        {},
        h("td", {}, i + 1),
        h("td", { class: "num" }, score(r.score)),
        h("td", {}, h("code", { class: "uri" }, r.ukoUri), h("div", { class: "snippet" }, r.content.slice(0, 200))),
        h(
          "td",
          {},
          h(
            "ul",
            { class: "plain contributions" },
            r.contributions.map((c) => h("li", {}, `${c.source}: rank ${c.rank}, score ${score(c.score)}`)),
          ),
        ),
        h("td", {}, h("button", { type: "button", "aria-label": `Fetch ${r.ukoUri}`, onclick: () => fetchOne(r.ukoUri) }, "Fetch")),
      ),
    { label: "Results", container: "tbody" },
  );
  replace(
    resultsEl,
    h("h3", {}, plural(rows.length, "result")),
    mode === "hybrid"
      ? h(
          "p",
          { class: "hint" },
          "Fused score: reciprocal rank fusion of each source's rank (rrf_k 60 unless set), normalised into [0, 1]; a unit found by more sources ranks higher.",
        )
      : null,
    h(
      "table",
      { class: "data", id: "results-table" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["#", mode === "hybrid" ? "Fused score" : "Score", "Unit", "Why it ranked here (source: rank, score)", ""].map((c) =>
            h("th", { scope: "col" }, c),
          ),
        ),
      ),
      list.body,
    ),
    list.pager,
  );
  announce(plural(rows.length, "result"));
}

/** Floats from a pasted embedding: `[0.1, 0.2]`, `0.1,0.2` or `0.1 0.2`; anything else is refused here. */
export function parseEmbedding(text: string): number[] {
  const parts = text
    .replace(/[[\]]/g, " ")
    .split(/[\s,]+/)
    .filter((p) => p !== "");
  const values = parts.map(Number);
  if (values.length === 0 || values.some((v) => !Number.isFinite(v)))
    throw new Error("The embedding must be a list of numbers, e.g. [0.1, 0.2, 0.3].");
  return values;
}

/** Four decimals, or an exponent for tiny scores (BM25 over a small corpus), so none reads as 0. */
function score(v: number): string {
  return v !== 0 && Math.abs(v) < 0.001 ? v.toExponential(2) : v.toFixed(4);
}

function sourceName(s: Source): string {
  return SOURCES.find(([v]) => v === s)?.[1] ?? String(s);
}

function flagsView(a: AnswerFlags): HTMLElement {
  return h(
    "dl",
    { class: "kv flags" },
    h("dt", {}, "exhaustive"),
    h("dd", { id: "flag-exhaustive" }, String(a.exhaustive)),
    h("dt", {}, "index_generation"),
    h("dd", { id: "flag-index-generation" }, String(a.indexGeneration)),
    h("dt", {}, "scope_id"),
    h("dd", {}, h("code", {}, a.scopeId)),
    a.partial !== undefined ? [h("dt", {}, "partial"), h("dd", { id: "flag-partial" }, String(a.partial))] : null,
    a.failedSources?.length ? [h("dt", {}, "failed sources"), h("dd", {}, a.failedSources.join(", "))] : null,
  );
}

function termView(t: Term | undefined): HTMLElement | string {
  if (!t) return "";
  if (t.kind === TermKind.IRI) return h("code", {}, `<${t.value}>`);
  if (t.kind === TermKind.BLANK) return h("code", {}, `_:${t.value}`);
  const suffix = t.language ? `@${t.language}` : t.datatype ? `^^<${t.datatype}>` : "";
  return h("span", {}, JSON.stringify(t.value), h("small", {}, suffix));
}
