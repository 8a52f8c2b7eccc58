/** What the tree needs of a resource (a subset of acms.v1.Resource). */
export interface TreeResource {
  id: string;
  alias: string;
  kind: string;
  parentIds: readonly string[];
}

/** One line of the drawn DAG. */
export interface TreeRow<R extends TreeResource> {
  resource: R;
  depth: number;
  /** True when the resource was already drawn under another parent: its subtree is not repeated. */
  repeated: boolean;
}

/**
 * Flattens a project's resource DAG into indented rows, depth-first, children by alias. A resource with
 * several parents is drawn under each, expanded only the first time (so the rows stay linear in the edges);
 * resources whose parents are all outside the list are roots. Cycles cannot loop.
 */
export function resourceTree<R extends TreeResource>(resources: readonly R[]): TreeRow<R>[] {
  const byId = new Map(resources.map((r) => [r.id, r]));
  const children = new Map<string, R[]>();
  const roots: R[] = [];
  for (const r of resources) {
    const parents = r.parentIds.filter((p) => byId.has(p) && p !== r.id);
    if (parents.length === 0) roots.push(r);
    for (const p of parents) {
      const list = children.get(p) ?? [];
      list.push(r);
      children.set(p, list);
    }
  }
  const order = (a: R, b: R) => a.alias.localeCompare(b.alias) || a.id.localeCompare(b.id);
  const rows: TreeRow<R>[] = [];
  const expanded = new Set<string>();
  const walk = (r: R, depth: number) => {
    const repeated = expanded.has(r.id);
    rows.push({ resource: r, depth, repeated });
    if (repeated) return;
    expanded.add(r.id);
    for (const c of (children.get(r.id) ?? []).sort(order)) walk(c, depth + 1);
  };
  for (const r of roots.sort(order)) walk(r, 0);
  // Resources on a cycle with no root above them are still drawn.
  for (const r of [...resources].sort(order)) if (!expanded.has(r.id)) walk(r, 0);
  return rows;
}
