import { porterStem } from "./porter-stemmer.js";
import { tokenizeUnicode61 } from "./unicode61-tokenizer.js";

/** The most distinct query words searched; longer queries keep their first words (as the FTS5 backend). */
export const MAX_KEYWORD_QUERY_WORDS = 64;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * The phrases a keyword query searches for, the way the FTS5 text backend builds its MATCH expression:
 * the distinct runs of letters, digits and marks (lower-cased, first appearance first, at most 64), each
 * analysed like indexed text (unicode61 folding, Porter stemming) into a phrase of one or more terms.
 * Every other character (FTS5 operators, quotes, brackets) separates words and has no meaning. The
 * phrases are OR-ed: a row matches when it holds any of them.
 * @example keywordQueryPhrases("Running runners!") // [["run"], ["runner"]]
 */
export function keywordQueryPhrases(query: string): string[][] {
  const words = new Set<string>();
  for (const m of query.matchAll(WORD)) {
    words.add(m[0].toLowerCase());
    if (words.size === MAX_KEYWORD_QUERY_WORDS) break;
  }
  return [...words].map(analyzeKeywords);
}

/** Analyses text into index terms: unicode61 tokens, Porter-stemmed (FTS5's `porter unicode61`). */
export function analyzeKeywords(text: string): string[] {
  return tokenizeUnicode61(text).map(porterStem);
}
