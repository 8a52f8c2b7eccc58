/**
 * A relevance-judged collection built where no public IR collection can be fetched: synthetic documents
 * (Zipf-drawn words, as bench/synthetic-corpus.ts makes them) into which each query's topic words are
 * planted, so the judgments come from how the collection was made, never from an engine's ranking.
 *
 * Per query: three topic words of their own (rare in the background text, but also sprinkled once into
 * unrelated documents as noise), plus one common word. Grade 2: documents holding every topic word,
 * several times. Grade 1: documents holding one or two of them. Noise documents hold one topic word
 * once and are judged not relevant, so BM25 has real choices to make and nDCG@10 stays below 1.
 */
import { prng } from "../test/support/prng.js";
import { syntheticWord, zipfRank } from "./synthetic-corpus.js";

/** One judged query: its text and the grade of each relevant document (by document id). */
export interface JudgedQuery {
  text: string;
  grades: Map<string, number>;
}

/** The documents (id and text) and the judged queries. */
export interface JudgedCollection {
  documents: Array<{ id: string; text: string }>;
  queries: JudgedQuery[];
}

const BACKGROUND_VOCABULARY = 20_000;
const HIGHLY_RELEVANT = 3;
const PARTLY_RELEVANT = 6;
const NOISE = 20;

/**
 * `documents` background documents (30 to 80 words) and `queries` queries with their planted relevant
 * documents, all drawn from `seed`. Document ids are `d<n>`.
 */
export function plantedCollection(seed: number, documents: number, queries: number): JudgedCollection {
  const rand = prng(seed);
  const pick = (n: number) => Math.floor(rand() * n);
  const texts: string[][] = [];
  for (let d = 0; d < documents; d++) {
    const words: string[] = [];
    const n = 30 + pick(51);
    for (let w = 0; w < n; w++) words.push(syntheticWord(zipfRank(rand, BACKGROUND_VOCABULARY)));
    texts.push(words);
  }
  const insert = (doc: number, word: string, times: number) => {
    for (let i = 0; i < times; i++) texts[doc].splice(pick(texts[doc].length + 1), 0, word);
  };
  const judged: JudgedQuery[] = [];
  for (let q = 0; q < queries; q++) {
    // Topic words beyond the background vocabulary: only planted documents hold them.
    const topic = [0, 1, 2].map((k) => syntheticWord(BACKGROUND_VOCABULARY + 3 * q + k));
    const common = syntheticWord(5 + pick(50));
    const grades = new Map<string, number>();
    const used = new Set<number>();
    const fresh = () => {
      for (;;) {
        const d = pick(documents);
        if (!used.has(d)) {
          used.add(d);
          return d;
        }
      }
    };
    for (let i = 0; i < HIGHLY_RELEVANT; i++) {
      const d = fresh();
      for (const t of topic) insert(d, t, 1 + pick(3));
      grades.set(`d${d}`, 2);
    }
    for (let i = 0; i < PARTLY_RELEVANT; i++) {
      const d = fresh();
      const held = topic.filter(() => rand() < 0.5);
      for (const t of held.length > 0 ? held : [topic[pick(3)]]) insert(d, t, 1 + pick(2));
      grades.set(`d${d}`, 1);
    }
    for (let i = 0; i < NOISE; i++) insert(fresh(), topic[pick(3)], 1);
    judged.push({ text: [...topic, common].join(" "), grades });
  }
  return { documents: texts.map((words, d) => ({ id: `d${d}`, text: words.join(" ") })), queries: judged };
}

/** nDCG@k of a ranked list of document ids against graded judgments (gain 2^grade - 1, log2 discount). */
export function ndcgAt(k: number, ranked: readonly string[], grades: ReadonlyMap<string, number>): number {
  const dcg = (gs: number[]) => gs.slice(0, k).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const ideal = dcg([...grades.values()].sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranked.map((id) => grades.get(id) ?? 0)) / ideal;
}
