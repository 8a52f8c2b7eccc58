/**
 * The synthetic text the keyword benchmarks index: made-up words from a fixed syllable set drawn with a
 * Zipf-like distribution (as natural language is), and valid-looking resource ULIDs, all deterministic.
 */

const SYLLABLES = ["ka", "lo", "mi", "ner", "ta", "vo", "shi", "ru", "pen", "dal", "gor", "eth", "quin", "zu", "bar", "fel"];

/** The `i`-th word of the vocabulary (distinct for every i). */
export function syntheticWord(i: number): string {
  let s = "";
  let n = i + 1;
  while (n > 0) {
    s += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return s;
}

/** A Zipf-like word rank below `vocabulary`: rank r drawn with probability ~ 1/r. */
export function zipfRank(rand: () => number, vocabulary: number): number {
  return Math.min(vocabulary - 1, Math.floor(Math.exp(rand() * Math.log(vocabulary))) - 1);
}

/** The `i`-th benchmark resource id, a 26-character Crockford base-32 string as resource ids are. */
export function syntheticUlid(i: number): string {
  return `01J${i
    .toString(32)
    .toUpperCase()
    .replace(/[ILOU]/g, "X")
    .padStart(23, "0")}`;
}
