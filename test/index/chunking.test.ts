import fc from "fast-check";
import { countTokens } from "../../src/domain/token-count.js";
import { chunkText, DEFAULT_CHUNKING } from "../../src/domain/chunking.js";

/** Rebuilds the text from overlapping chunks: each chunk after the first starts with a suffix of the text so far. */
function stitch(chunks: string[]): string {
  let out = "";
  for (const c of chunks) {
    let k = Math.min(out.length, c.length);
    while (k > 0 && !out.endsWith(c.slice(0, k))) k -= 1;
    out += c.slice(k);
  }
  return out;
}

describe("chunkText", () => {
  it("keeps a short text whole", () => {
    expect(chunkText("hello world")).toEqual(["hello world"]);
    expect(chunkText("")).toEqual([]);
  });

  it("cuts long text into chunks of at most the size, overlapping by about the overlap", () => {
    const text = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(" ");
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(countTokens(c)).toBeLessThanOrEqual(DEFAULT_CHUNKING.chunkTokens + 2);
    for (let i = 1; i < chunks.length; i++) {
      const prevTail = chunks[i - 1].split(" ").slice(-3).join(" ");
      expect(chunks[i]).toContain(prevTail.trim());
    }
    expect(stitch(chunks)).toBe(text);
  });

  it("never splits a multi-byte character, even in unspaced scripts", () => {
    const text = Array.from({ length: 3000 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20000))).join("");
    const chunks = chunkText(text, { chunkTokens: 64, overlapTokens: 8 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(c).not.toContain("\uFFFD");
    expect(stitch(chunks)).toBe(text);
  });

  it("treats special-token markers as text", () => {
    expect(chunkText("before <|endoftext|> after")).toEqual(["before <|endoftext|> after"]);
  });

  it("rejects nonsensical options", () => {
    expect(() => chunkText("x", { chunkTokens: 10, overlapTokens: 10 })).toThrow(RangeError);
    expect(() => chunkText("x", { chunkTokens: 0, overlapTokens: 0 })).toThrow(RangeError);
  });

  it("covers the whole text for any input (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), (s) => {
        const chunks = chunkText(s, { chunkTokens: 16, overlapTokens: 4 });
        expect(chunks.join("").length).toBeGreaterThanOrEqual(s.length);
        for (const c of chunks) expect(s).toContain(c);
      }),
      { numRuns: 150 },
    );
  });
});
