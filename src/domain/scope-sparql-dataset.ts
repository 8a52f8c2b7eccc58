import type { SparqlQueryInspection } from "./inspect-sparql-query.js";
import type { ScopedBackendView } from "./scoped-backend-view.js";
import { graphIri, resourceIdOfGraphIri } from "./uko-uri.js";
import { scopeViolation } from "./scope-violation.js";

/** The RDF dataset one query runs on: both lists only ever hold named graphs of in-scope resources. */
export interface ScopedDataset {
  /** Graphs whose union is the default graph. */
  defaultGraphs: string[];
  /** Graphs `GRAPH ?g` may visit. */
  namedGraphs: string[];
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * The dataset a query may run on under `view`. By default the default graph is the union of the in-scope
 * named graphs and the named graphs are the in-scope ones. A query with FROM / FROM NAMED narrows that to
 * exactly the graphs it names (SPARQL's own rule: with a dataset clause, FROM alone gives no named graphs
 * and FROM NAMED alone an empty default graph). Any graph named by FROM, FROM NAMED or GRAPH <iri> that is
 * not an in-scope resource's graph is a ScopeViolation naming the offending resources (and, in the reason,
 * IRIs that are no resource graph at all), so a query never silently answers from less than it asked for.
 */
export function scopeSparqlDataset(inspection: SparqlQueryInspection, view: ScopedBackendView): ScopedDataset {
  const named = unique([...inspection.from, ...inspection.fromNamed, ...inspection.graphNames]);
  const outsideIds: string[] = [];
  const foreign: string[] = [];
  for (const iri of named) {
    const id = resourceIdOfGraphIri(iri);
    if (id === undefined) foreign.push(iri);
    else if (!view.resourceSet.has(id)) outsideIds.push(id);
  }
  if (outsideIds.length > 0 || foreign.length > 0) {
    const parts: string[] = [];
    if (outsideIds.length > 0) parts.push(`graphs of resources not in scope: ${outsideIds.map((id) => `<${graphIri(id)}>`).join(", ")}`);
    if (foreign.length > 0) {
      parts.push(
        `${foreign.map((iri) => `<${iri}>`).join(", ")} ${foreign.length === 1 ? "is not a resource graph" : "are not resource graphs"} (uko://<resource-ulid>/)`,
      );
    }
    const reason = `the query names ${parts.join("; ")}`;
    throw scopeViolation({
      available: view.projectNames,
      resources: outsideIds,
      reason,
      message: `SPARQL query ${reason}. Scope ${view.scopeId} holds ${view.resourceIds.length} resource graph(s)`,
    });
  }
  if (inspection.from.length > 0 || inspection.fromNamed.length > 0) {
    return { defaultGraphs: unique(inspection.from), namedGraphs: unique(inspection.fromNamed) };
  }
  const all = view.resourceIds.map(graphIri);
  return { defaultGraphs: all, namedGraphs: all };
}
