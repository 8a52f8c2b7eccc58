import { SparqlEndpointGraphBackend, type SparqlEndpointGraphBackendOptions } from "./sparql-endpoint-graph-backend.js";

/**
 * Opens the graph on the configured SPARQL endpoint, for the composition root: one call, and a line for
 * the start-up log that names the engine (never the credentials).
 */
export async function openSparqlEndpointGraph(
  config: SparqlEndpointGraphBackendOptions,
): Promise<{ graph: SparqlEndpointGraphBackend; description: string }> {
  const graph = await SparqlEndpointGraphBackend.open(config);
  const where = (u: string) => {
    const url = new URL(u);
    return `${url.protocol}//${url.host}${url.pathname}`;
  };
  const update = config.updateUrl === config.queryUrl ? "" : `, updates ${where(config.updateUrl)}`;
  return { graph, description: `SPARQL endpoint ${where(config.queryUrl)}${update}${config.user ? ` as ${config.user}` : ""}` };
}
