import { InvalidArgumentError } from "../../src/domain/errors.js";
import {
  embeddingProblem,
  requireEmbedding,
  requireText,
  resolveCount,
  resolveDepth,
  resolveMinScore,
} from "../../src/domain/request-limits.js";

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as InvalidArgumentError).violations[0].field;
  }
  return undefined;
}

describe("request limits", () => {
  it("optional counts: absent is the default, present must be in 1..cap", () => {
    expect(resolveCount("max_results", undefined, 20, 1000)).toBe(20);
    expect(resolveCount("max_results", 1000, 20, 1000)).toBe(1000);
    expect(fieldOf(() => resolveCount("max_results", 0, 20, 1000))).toBe("max_results");
    expect(fieldOf(() => resolveCount("top_k", -3, 20, 1000))).toBe("top_k");
    expect(fieldOf(() => resolveCount("rrf_k", 1001, 60, 1000))).toBe("rrf_k");
  });

  it("depth: absent is the default, 0..8", () => {
    expect(resolveDepth("depth", undefined, 2)).toBe(2);
    expect(resolveDepth("depth", 0, 2)).toBe(0);
    expect(resolveDepth("depth", 8, 2)).toBe(8);
    expect(fieldOf(() => resolveDepth("depth", -1, 2))).toBe("depth");
    expect(fieldOf(() => resolveDepth("depth", 9, 2))).toBe("depth");
  });

  it("min_score in [0, 1]", () => {
    expect(resolveMinScore("min_score", undefined)).toBe(0);
    expect(resolveMinScore("min_score", 0.5)).toBe(0.5);
    expect(fieldOf(() => resolveMinScore("min_score", 1.5))).toBe("min_score");
    expect(fieldOf(() => resolveMinScore("min_score", Number.NaN))).toBe("min_score");
  });

  it("text must be non-blank and bounded", () => {
    expect(requireText("query", "hello")).toBe("hello");
    expect(fieldOf(() => requireText("query", "   "))).toBe("query");
    expect(fieldOf(() => requireText("query", "x".repeat(20000)))).toBe("query");
  });

  it("embeddings must match the dimension, be finite and non-zero", () => {
    expect(Array.from(requireEmbedding("embedding", [1, 0, 0], 3))).toEqual([1, 0, 0]);
    expect(fieldOf(() => requireEmbedding("embedding", [], 3))).toBe("embedding");
    expect(fieldOf(() => requireEmbedding("embedding", [1, 0], 3))).toBe("embedding");
    expect(fieldOf(() => requireEmbedding("embedding", [1, Number.POSITIVE_INFINITY, 0], 3))).toBe("embedding");
    expect(fieldOf(() => requireEmbedding("embedding", [0, 0, 0], 3))).toBe("embedding");
  });

  it("an embedding is judged in float32, where it is kept: all zero there is the zero vector", () => {
    expect(fieldOf(() => requireEmbedding("embedding", [1e-50, 0, -1e-46], 3))).toBe("embedding");
    expect(embeddingProblem([1e-50, 0, 0], 3)).toMatch(/zero vector.*float32/);
    expect(embeddingProblem([1e-30, 0, 0], 3)).toBeUndefined();
    expect(Array.from(requireEmbedding("embedding", [1e-30, 1e-50, 0], 3))).toEqual([Math.fround(1e-30), 0, 0]);
  });
});
