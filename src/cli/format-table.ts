/**
 * Lays rows out in aligned columns. The last column takes what is left of `width` and is cut with an
 * ellipsis, so a table of long snippets stays one line per row in a terminal.
 */
export function formatTable(headers: string[], rows: string[][], width = 120): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const fixed = widths.slice(0, -1).reduce((a, b) => a + b + 2, 0);
  const lastWidth = Math.max(20, width - fixed);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? truncate(c, lastWidth) : c.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n") + "\n";
}

/** `text` cut to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * A one-line excerpt of `content` at the window of `max` characters that holds the most distinct words of
 * `query` (matched at word starts, so `store` finds `stored`), so the table shows why a result matched.
 */
export function snippet(content: string, query: string, max = 80): string {
  const flat = content.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const words = [
    ...new Set(
      query
        .toLowerCase()
        .split(/[^\p{L}\p{N}_]+/u)
        .filter((w) => w.length >= 3),
    ),
  ];
  const hits: { at: number; word: number }[] = [];
  const lower = flat.toLowerCase();
  words.forEach((w, word) => {
    for (let at = lower.indexOf(w); at >= 0; at = lower.indexOf(w, at + 1)) {
      if (at === 0 || !/[\p{L}\p{N}_]/u.test(lower[at - 1])) hits.push({ at, word });
    }
  });
  if (hits.length === 0) return truncate(flat, max);
  hits.sort((a, b) => a.at - b.at);
  // A little context before the first hit of the window; the rest of the width holds the hits.
  const lead = Math.min(20, Math.floor(max / 4));
  let best = { start: hits[0].at, count: 0 };
  for (let i = 0; i < hits.length; i++) {
    const seen = new Set<number>();
    for (let j = i; j < hits.length && hits[j].at < hits[i].at + max - lead - 6; j++) seen.add(hits[j].word);
    if (seen.size > best.count) best = { start: hits[i].at, count: seen.size };
  }
  const start = Math.max(0, best.start - lead);
  return start === 0 ? truncate(flat, max) : truncate(`…${flat.slice(start)}`, max);
}
