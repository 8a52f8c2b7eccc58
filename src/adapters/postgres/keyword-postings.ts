import { analyzeKeywords } from "../../domain/keyword-query.js";

/** The keyword rows and postings of a batch of chunks, as flat arrays for one multi-row insert each. */
export interface KeywordBatch {
  rowKeys: number[];
  rowLengths: number[];
  terms: string[];
  postingKeys: number[];
  /** Each posting's positions as a PostgreSQL array literal (`{0,7}`). */
  positions: string[];
  /** Tokens over all rows (for the table's total length). */
  tokens: number;
}

/**
 * Analyses chunk texts the way FTS5's `porter unicode61` does (the domain's tokenizer and stemmer,
 * checked against FTS5) into term postings with positions. A row's length is its term count plus one:
 * the embedded FTS5 table holds a resource tag token in a second column, which FTS5 counts in every
 * row's length (|D| and avgdl), so the same offset gives the same BM25 scores.
 */
export function keywordBatch(chunks: ReadonlyArray<{ chunkKey: number; text: string }>): KeywordBatch {
  const batch: KeywordBatch = { rowKeys: [], rowLengths: [], terms: [], postingKeys: [], positions: [], tokens: 0 };
  for (const { chunkKey, text } of chunks) {
    const terms = analyzeKeywords(text);
    const byTerm = new Map<string, number[]>();
    terms.forEach((t, pos) => {
      const list = byTerm.get(t);
      if (list) list.push(pos);
      else byTerm.set(t, [pos]);
    });
    for (const [term, positions] of byTerm) {
      batch.terms.push(term);
      batch.postingKeys.push(chunkKey);
      batch.positions.push(`{${positions.join(",")}}`);
    }
    const length = terms.length + 1;
    batch.rowKeys.push(chunkKey);
    batch.rowLengths.push(length);
    batch.tokens += length;
  }
  return batch;
}
