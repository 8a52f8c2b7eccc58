/**
 * The corpus the peer benchmarks share (issue 29): judged documents spread over 1,000 resources in two
 * layouts (equal shares, and Zipf-sized shares as real projects are), with scopes of 1, 10, 100 and all of
 * them, and each query in a long natural-language form and a short one.
 *
 * The documents and judgments come from a public BEIR-layout collection when `BENCH_IR_COLLECTION=<dir>`
 * names one (SciFact, NFCorpus, ...: bench/beir-collection.ts), else from the planted collection
 * (bench/planted-relevance.ts): no registry package ships a BEIR collection that installs offline here.
 * A planted query is three rare topic words and one common word (the short form); its long form adds
 * twelve of the most common background words, as natural-language questions carry stop words, so it
 * matches nearly every document (SciFact's queries match ~90% of its chunks) and an engine that scores every
 * match pays for it. A BEIR query is its long form; its short form is its first three words.
 */
import { readBeirCollection } from "../beir-collection.js";
import { ndcgAt, plantedCollection, type JudgedCollection } from "../planted-relevance.js";
import { prng } from "../../test/support/prng.js";
import { syntheticWord } from "../synthetic-corpus.js";

/** Resources the corpus is spread over. */
export const PEER_RESOURCES = 1000;
/** The scope sizes (in resources) every peer is measured at. */
export const PEER_SCOPES = [1, 10, 100, PEER_RESOURCES] as const;
/** How documents are shared out among resources. */
export type PeerLayout = "equal" | "zipf";
export const PEER_LAYOUTS: readonly PeerLayout[] = ["equal", "zipf"];
/** The two forms of each query. */
export type QueryForm = "long" | "short";
export const QUERY_FORMS: readonly QueryForm[] = ["long", "short"];

/** One judged query in both forms. */
export interface PeerQuery {
  long: string;
  short: string;
  grades: ReadonlyMap<string, number>;
}

/** The corpus: documents (id, text, resource index per layout), queries, and where it came from. */
export interface PeerCorpus {
  source: string;
  documents: Array<{ id: string; text: string; resource: Record<PeerLayout, number> }>;
  queries: PeerQuery[];
}

export { ndcgAt };

const LONG_EXTRA_WORDS = 12;

/**
 * The resource index of document `d` of `n` in the Zipf layout: resource r holds a share ~ 1/(r+1) of the
 * documents (resource 0 the largest), each resource at least one document when n allows.
 */
function zipfAssignment(n: number, resources: number): number[] {
  const weights = Array.from({ length: resources }, (_, r) => 1 / (r + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const spare = Math.max(0, n - resources);
  const sizes = weights.map((w) => (n >= resources ? 1 : 0) + Math.floor((spare * w) / total));
  let left = n - sizes.reduce((a, b) => a + b, 0);
  for (let r = 0; left > 0; r = (r + 1) % resources, left--) sizes[r] += 1;
  const out: number[] = [];
  sizes.forEach((size, r) => {
    for (let i = 0; i < size; i++) out.push(r);
  });
  // Shuffled (deterministically), so a resource's documents are not neighbours in the collection's order.
  const rand = prng(99);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The peer corpus at `scale` (1 = 20,000 planted documents and 200 queries; at least 1,000 documents, one per resource). */
export function loadPeerCorpus(scale: number): PeerCorpus {
  const dir = process.env.BENCH_IR_COLLECTION;
  let collection: JudgedCollection;
  let source: string;
  let forms: (text: string, i: number) => { long: string; short: string };
  if (dir) {
    collection = readBeirCollection(dir);
    source = `BEIR collection ${dir}`;
    forms = (text) => ({ long: text, short: text.split(/\s+/).slice(0, 3).join(" ") });
  } else {
    const docs = Math.max(PEER_RESOURCES, Math.round(20_000 * scale));
    const queries = Math.max(20, Math.round(200 * scale));
    collection = plantedCollection(29, docs, queries);
    source = `planted collection (${docs} documents, ${queries} queries)`;
    const rand = prng(31);
    forms = (text) => {
      const extra = Array.from({ length: LONG_EXTRA_WORDS }, () => syntheticWord(Math.floor(rand() * 40)));
      const words = [...text.split(" "), ...extra];
      for (let i = words.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [words[i], words[j]] = [words[j], words[i]];
      }
      return { long: words.join(" "), short: text };
    };
  }
  const n = collection.documents.length;
  const zipf = zipfAssignment(n, PEER_RESOURCES);
  return {
    source,
    documents: collection.documents.map((d, i) => ({ ...d, resource: { equal: i % PEER_RESOURCES, zipf: zipf[i] } })),
    queries: collection.queries.map((q, i) => ({ ...forms(q.text, i), grades: q.grades })),
  };
}

/** The resource indexes of a scope of `size` resources: the first `size` (in the Zipf layout, the largest first). */
export function scopeResources(size: number): number[] {
  return Array.from({ length: Math.min(size, PEER_RESOURCES) }, (_, r) => r);
}

/** Recall@k: the share of the relevant documents among the first k distinct ids. */
export function recallAt(k: number, ranked: readonly string[], grades: ReadonlyMap<string, number>): number {
  if (grades.size === 0) return 0;
  let found = 0;
  for (const id of ranked.slice(0, k)) if (grades.has(id)) found += 1;
  return found / grades.size;
}

/** The judgments of `query` restricted to documents inside the scope (`inScope(docId)`). */
export function gradesWithin(grades: ReadonlyMap<string, number>, inScope: (docId: string) => boolean): Map<string, number> {
  return new Map([...grades].filter(([id]) => inScope(id)));
}
