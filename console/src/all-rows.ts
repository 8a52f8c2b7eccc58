/** Every row of an async iterable (a `listAll*` walk over every page of a listing), in order. */
export async function allRows<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const r of rows) out.push(r);
  return out;
}
