/** `rows` grouped by `key`, groups and rows in first-seen order. */
export function groupBy<R>(rows: readonly R[], key: (r: R) => string): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}
