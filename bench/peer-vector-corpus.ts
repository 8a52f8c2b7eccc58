/**
 * The vector corpus the peer bench (and the recall checks behind it) use: `resources` resources of
 * clustered 384-dimension vectors (each resource drawing mostly from four of 256 topics, as a repository
 * covers a few subjects), sized equally or by Zipf(1), with queries drawn near stored vectors: from the
 * whole store, or from inside a scope. Deterministic (seeded PRNG), so runs compare.
 */
import type { VectorEntry } from "../src/ports/vector-backend.js";
import { gaussian, prng } from "../test/support/prng.js";

export const PEER_DIM = 384;
const CLUSTERS = 256;

/** The id of the i-th resource of the corpus (a ULID-shaped string). */
export function corpusResourceId(i: number): string {
  return `01JPEERV${String(i).padStart(18, "0")}`;
}

/** Zipf(1) sizes summing to `total`, every resource holding at least one vector. */
export function zipfSizes(total: number, count: number): number[] {
  const h = Array.from({ length: count }, (_, i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
  const sizes = Array.from({ length: count }, (_, i) => Math.max(1, Math.floor(total / (i + 1) / h)));
  let missing = total - sizes.reduce((a, b) => a + b, 0);
  for (let i = 0; missing > 0; i = (i + 1) % count, missing--) sizes[i] += 1;
  let extra = sizes.reduce((a, b) => a + b, 0) - total;
  for (let i = 0; extra > 0; i = (i + 1) % count) if (sizes[i] > 1) ((sizes[i] -= 1), extra--);
  return sizes;
}

export interface VectorCorpus {
  dim: number;
  sizes: number[];
  /** Every vector, resource by resource (chunk keys 1..n in order). */
  entries: VectorEntry[];
  /** The first entry index of each resource. */
  starts: number[];
}

/** A corpus of `sizes.length` resources holding `sizes[i]` vectors each. */
export function makeVectorCorpus(sizes: number[], seed = 2029, dim = PEER_DIM): VectorCorpus {
  const rnd = prng(seed);
  const centres = Array.from({ length: CLUSTERS }, () => Float32Array.from({ length: dim }, () => gaussian(rnd)));
  const entries: VectorEntry[] = [];
  const starts: number[] = [];
  let key = 1;
  sizes.forEach((size, r) => {
    starts.push(entries.length);
    const topics = Array.from({ length: 4 }, () => centres[Math.floor(rnd() * CLUSTERS)]);
    for (let i = 0; i < size; i++) {
      const c = rnd() < 0.8 ? topics[Math.floor(rnd() * topics.length)] : centres[Math.floor(rnd() * CLUSTERS)];
      entries.push({
        chunkKey: key++,
        resourceId: corpusResourceId(r),
        path: `docs/${i}.md`,
        supersededAt: null,
        vector: Float32Array.from(c, (x) => x + 0.9 * gaussian(rnd)),
      });
    }
  });
  return { dim, sizes, entries, starts };
}

/** `count` queries near stored vectors: drawn from the whole store, or (with `within`) from those resources only. */
export function corpusQueries(corpus: VectorCorpus, count: number, seed: number, within?: readonly number[]): Float32Array[] {
  const rnd = prng(seed);
  return Array.from({ length: count }, () => {
    let base: Float32Array;
    if (within && within.length > 0) {
      const r = within[Math.floor(rnd() * within.length)];
      base = corpus.entries[corpus.starts[r] + Math.floor(rnd() * corpus.sizes[r])].vector;
    } else base = corpus.entries[Math.floor(rnd() * corpus.entries.length)].vector;
    return Float32Array.from(base, (x) => x + 0.6 * gaussian(rnd));
  });
}

/** The exact top `k` chunk keys by cosine among `entries` of the given resources (the truth recall is measured against). */
export function exactTopK(corpus: VectorCorpus, resources: readonly number[], query: Float32Array, k: number): number[] {
  const q = unit(query);
  const best: Array<[number, number]> = [];
  for (const r of resources) {
    for (let i = corpus.starts[r], end = i + corpus.sizes[r]; i < end; i++) {
      const e = corpus.entries[i];
      const v = e.vector;
      let dot = 0;
      let norm = 0;
      for (let j = 0; j < v.length; j++) {
        dot += q[j] * v[j];
        norm += v[j] * v[j];
      }
      const score = dot / Math.sqrt(norm);
      if (best.length < k || score > best[best.length - 1][0]) {
        best.push([score, e.chunkKey]);
        best.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
        if (best.length > k) best.pop();
      }
    }
  }
  return best.map((b) => b[1]);
}

function unit(v: Float32Array): Float64Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return Float64Array.from(v, (x) => x / n);
}

/** Recall: the share of `truth`'s keys found in `got`. */
export function recallOf(truth: readonly number[], got: readonly number[]): number {
  if (truth.length === 0) return 1;
  const want = new Set(truth);
  return got.filter((k) => want.has(k)).length / truth.length;
}
