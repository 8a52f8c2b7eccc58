/** The most distinct query terms searched; longer queries keep their first terms. */
export const MAX_QUERY_TERMS = 64;

const TERM = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * The distinct indexable terms of a user's query, lower-cased, in order of first appearance: runs of
 * letters, digits and combining marks, the characters the `unicode61` tokenizer indexes. Everything
 * else (FTS5 operators, quotes, brackets, column filters) is a separator and has no effect.
 */
export function queryTerms(query: string): string[] {
  const seen = new Set<string>();
  for (const m of query.matchAll(TERM)) {
    seen.add(m[0].toLowerCase());
    if (seen.size === MAX_QUERY_TERMS) break;
  }
  return [...seen];
}

/** An FTS5 string literal: double quotes around the text, inner quotes doubled. */
export function quoteFts5(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/**
 * The FTS5 MATCH expression for `terms` (from `queryTerms`) restricted to `column`: each term is quoted,
 * so user input can never be read as FTS5 syntax, and the terms are OR-ed, so BM25 ranks chunks by how
 * many (and how rare) terms they hold instead of dropping every chunk that lacks one. Undefined when
 * there are no terms.
 */
export function matchAnyTerm(column: string, terms: readonly string[]): string | undefined {
  if (terms.length === 0) return undefined;
  return `${column} : (${terms.map(quoteFts5).join(" OR ")})`;
}
