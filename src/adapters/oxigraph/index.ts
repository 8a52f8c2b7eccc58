/**
 * The embedded graph engine: Oxigraph (WebAssembly) in query worker threads over a SQLite file that holds
 * every triple durably. The embedded default for the graph.
 */
import { OxigraphGraphBackend, type OxigraphGraphBackendOptions } from "./oxigraph-graph-backend.js";

export {
  DEFAULT_GRAPH_MAX_RESULTS,
  MAX_SPARQL_LENGTH,
  OxigraphGraphBackend,
  type OxigraphGraphBackendOptions,
} from "./oxigraph-graph-backend.js";

/**
 * Opens the graph in `options.path` and starts its query workers (loading in the background; with
 * `deferLoad`, from `beginLoading` on). `whenReady` says when queries can run.
 * @example const graph = openOxigraph({ path: `${dataDir}/graph.db` }); await graph.whenReady();
 */
export function openOxigraph(options: OxigraphGraphBackendOptions): OxigraphGraphBackend {
  return OxigraphGraphBackend.start(options);
}
