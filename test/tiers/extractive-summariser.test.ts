import fc from "fast-check";
import { extractiveSummary } from "../../src/domain/extractive-summariser.js";
import { countTokens, truncateToTokens } from "../../src/domain/token-count.js";
import { prose } from "./tier-fixtures.js";

describe("countTokens", () => {
  test("counts with a real BPE tokenizer, treating special-token markers as text", () => {
    expect(countTokens("")).toBe(0);
    expect(countTokens("hello world")).toBe(2);
    expect(countTokens("x <|endoftext|> y")).toBeGreaterThan(3);
  });

  test("truncateToTokens keeps a word-boundary prefix within the limit", () => {
    const text = prose(20);
    const cut = truncateToTokens(text, 15);
    expect(countTokens(cut)).toBeLessThanOrEqual(15);
    expect(text.startsWith(cut)).toBe(true);
    expect(text[cut.length]).toMatch(/\s/);
    expect(truncateToTokens("short", 10)).toBe("short");
  });
});

describe("extractiveSummary", () => {
  test("content within the target is kept whole", () => {
    expect(extractiveSummary("  A short note about the cache.  ", 50)).toBe("A short note about the cache.");
  });

  test("long content is cut to whole sentences of the original, in their order, within the target", () => {
    const text = prose(40);
    const summary = extractiveSummary(text, 64);
    expect(countTokens(summary)).toBeLessThanOrEqual(64);
    expect(summary.length).toBeGreaterThan(0);
    const sentences = summary.split(/(?<=\.)\s+/);
    let last = -1;
    for (const s of sentences) {
      const at = text.indexOf(s);
      expect(at).toBeGreaterThan(last);
      last = at;
    }
  });

  test("prefers sentences about what the fragment is mostly about", () => {
    const text = [
      "The weather was mild on Tuesday.",
      "The tier cache evicts the least recently used fragment when the tier cache is over budget.",
      "Lunch was at noon.",
      "Every tier cache move is atomic, and the tier cache budget always holds.",
      "Someone mentioned a film.",
    ].join(" ");
    const summary = extractiveSummary(text, 45);
    expect(summary).toContain("tier cache evicts");
    expect(summary).not.toContain("Lunch");
  });

  test("a single sentence longer than the target is cut at a word boundary", () => {
    const text = `One very long sentence ${"with many words ".repeat(200)}ends here.`;
    const summary = extractiveSummary(text, 20);
    expect(countTokens(summary)).toBeLessThanOrEqual(20);
    expect(summary.length).toBeGreaterThan(20);
    expect(text.startsWith(summary)).toBe(true);
  });

  test("is deterministic and always fits the target (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 0, maxLength: 80 }), { maxLength: 30 }),
        fc.integer({ min: 8, max: 80 }),
        (parts, target) => {
          const text = parts.join(". ");
          const a = extractiveSummary(text, target);
          expect(extractiveSummary(text, target)).toBe(a);
          expect(countTokens(a)).toBeLessThanOrEqual(target);
          if (text.trim().length > 0 && countTokens(text.trim()) <= target) expect(a).toBe(text.trim());
        },
      ),
      { numRuns: 300 },
    );
  });
});
