import { Bm25Index } from "../../src/adapters/kit/bm25/bm25-index.js";
import { keywordQueryPhrases } from "../../src/domain/keyword-query.js";
import type { ChunkText } from "../../src/ports/unit-reader.js";

/**
 * The in-memory BM25 index's statistics per resource (what a view's N and average length are drawn from):
 * kept by every change the index applies, and back to their previous values once a resource is erased.
 */
describe("Bm25Index statistics per resource", () => {
  const A = "01JAAAAAAAAAAAAAAAAAAAAAAA";
  const B = "01JBBBBBBBBBBBBBBBBBBBBBBB";
  const opts = { lengthOffset: 1, sliceSize: 64 };
  let key = 0;
  const chunk = (resourceId: string, path: string, text: string, supersededAt: number | null = null): ChunkText => ({
    chunkKey: ++key,
    resourceId,
    path,
    chunkIndex: 0,
    text,
    supersededAt,
  });
  const phrases = keywordQueryPhrases("alpha beta gamma");
  const scores = (index: Bm25Index, resources: string[]) =>
    index
      .score(phrases, new Set(resources), () => true)
      .map((s) => [index.rows[s.row]!.chunkKey, s.score])
      .sort((x, y) => x[0] - y[0]);

  test("erasing a resource returns its view's statistics and every other view's scores to their values before it was written", async () => {
    const a = [chunk(A, "a.md", "alpha beta"), chunk(A, "b.md", "beta gamma delta", 5), chunk(A, "c.md", "gamma")];
    const index = await Bm25Index.build({ generation: 1n, chunks: a }, opts);
    const statsBefore = index.statistics(new Set([A]));
    const everyBefore = index.statistics(new Set([A, B]));
    const scoresBefore = scores(index, [A]);
    expect(statsBefore).toEqual({ rows: 3, length: 2 + 3 + 1 + 3 });
    expect(scoresBefore).toHaveLength(3);

    const b = Array.from({ length: 10 }, (_, i) => chunk(B, `b${i}.md`, "alpha alpha beta ".repeat(i + 1)));
    index.apply({ generation: 2n, added: b.slice(0, 6), superseded: [], removed: [], at: 10 });
    index.apply({ generation: 3n, added: b.slice(6), superseded: [b[0].chunkKey], removed: [b[1].chunkKey], at: 11 });
    expect(index.statistics(new Set([A]))).toEqual(statsBefore);
    expect(scores(index, [A])).toEqual(scoresBefore);
    expect(index.statistics(new Set([B])).rows).toBe(9);
    expect(scores(index, [A, B])).not.toEqual(scoresBefore);

    // Erased in slices (rows removed), then the last slice clears the resource.
    index.apply({ generation: 4n, added: [], superseded: [], removed: b.slice(2, 6).map((c) => c.chunkKey), at: 12 });
    index.apply({ generation: 5n, added: [], superseded: [], removed: b.slice(6).map((c) => c.chunkKey), at: 13, clearResource: B });
    expect(index.statistics(new Set([B]))).toEqual({ rows: 0, length: 0 });
    expect(index.statistics(new Set([A, B]))).toEqual(everyBefore);
    expect(index.size).toBe(3);
    expect(scores(index, [A, B])).toEqual(scoresBefore);
  });
});
