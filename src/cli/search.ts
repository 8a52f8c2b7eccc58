import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction, serviceAction } from "./connection-options.js";

const actions = () => import("./search-actions.js");

/**
 * `acms search text|vector|graph|hybrid`: the four search modes under the --scope scope, as a table
 * (rank, score, UKO URI, snippet) or, with --json, the response message. The bodies are in
 * `search-text-action.ts` (text: the lean client, the text service alone) and `search-actions.ts`, loaded
 * only when a search runs.
 */
export function searchCommand(io: CliIo): Command {
  const search = new Command("search").description("search the --scope scope (text, vector, graph or hybrid)");

  addConnectionOptions(
    search
      .command("text")
      .description("full-text (BM25) search")
      .argument("<query...>", "the query words")
      .option("-n, --max-results <n>", "how many results (server default 20)")
      .option("--group-by-document", "one result per document, its best-ranked chunk (-n then counts documents)"),
    { scoped: true },
  ).action(serviceAction(io, async () => (await import("./search-text-action.js")).searchText(io)));

  addConnectionOptions(
    search
      .command("vector")
      .description("similarity search: text embedded by the server's embedder, or an embedding from your model")
      .argument("[text...]", "the query text (the server embeds it: ACMS_EMBED_MODEL_DIR or ACMS_EMBEDDINGS_URL)")
      .option("--embedding <json|@file>", "the query vector instead of text: a JSON array, or @file holding one")
      .option("-k, --top-k <n>", "how many results (server default 20)")
      .option("--min-score <x>", "lowest cosine similarity to return"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).searchVector(io)));

  addConnectionOptions(
    search
      .command("graph")
      .description("a SPARQL read query over the scope's named graphs")
      .argument("<sparql>", "the query, or @file holding it"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).searchGraph(io)));

  addConnectionOptions(
    search
      .command("hybrid")
      .description("text, vector and graph results fused by reciprocal rank")
      .argument("<query...>", "the query words")
      .option("--embedding <json|@file>", "a query vector, to add vector results")
      .option("--sources <list>", "comma-separated: text, vector, graph (default: every source that applies)")
      .option("-k, --top-k <n>", "how many results (server default 20)")
      .option("--min-score <x>", "lowest fused score to return")
      .option("--rrf-k <n>", "the RRF constant (server default 60)"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await actions()).searchHybrid(io)));
  return search;
}
