/**
 * The graph on an outside SPARQL 1.1 server (ACMS_SPARQL_QUERY_URL): Virtuoso, Fuseki, GraphDB and the like,
 * each tenant's triples in named graphs, every query rewritten to the scope's graphs.
 */
export { openSparqlEndpointGraph as openSparqlEndpoint } from "./open-sparql-endpoint-graph.js";
export { SparqlEndpointGraphBackend, type SparqlEndpointGraphBackendOptions } from "./sparql-endpoint-graph-backend.js";
