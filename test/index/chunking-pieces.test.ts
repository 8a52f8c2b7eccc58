import fc from "fast-check";
import { decode, encode, encodeGenerator } from "gpt-tokenizer";
import { chunkText, chunksOfPieces, type ChunkingOptions } from "../../src/domain/chunking.js";

// chunkText measures pieces from its own split and a memory of counts (issue 29, ingest speed): it must cut
// exactly where the tokenizer's own pass over the whole text would. The reference below is that pass
// (chunkText before the memory), written out here so the two can disagree.

const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

function referencePieces(text: string, maxTokens: number): Array<{ text: string; tokens: number }> {
  const pieces: Array<{ text: string; tokens: number }> = [];
  for (const tokens of encodeGenerator(text, PLAIN_TEXT)) {
    if (tokens.length === 0) continue;
    const pieceText = decode(tokens);
    if (tokens.length <= maxTokens) {
      pieces.push({ text: pieceText, tokens: tokens.length });
      continue;
    }
    const cps = Array.from(pieceText);
    for (let i = 0; i < cps.length; i += 64) {
      const part = cps.slice(i, i + 64).join("");
      pieces.push({ text: part, tokens: encode(part, PLAIN_TEXT).length });
    }
  }
  return pieces;
}

function referenceChunks(text: string, opts: ChunkingOptions): string[] {
  if (text.length === 0) return [];
  return chunksOfPieces(referencePieces(text, opts.chunkTokens), opts);
}

/** Fragments that exercise every branch of the o200k split pattern: cases, contractions, digits, punctuation, whitespace runs. */
const FRAGMENTS = [
  "word",
  " Word",
  "WORD",
  "CamelCase",
  "don't",
  " I'LL",
  "they've",
  "x'Re",
  "12345678",
  " 3.14",
  "!!",
  " ?!",
  "\n",
  "\r\n",
  "  \n\n",
  "   ",
  "\t",
  " ",
  "//",
  "<|endoftext|>",
  "naïve",
  "Ǆemal",
  "東京都",
  "😀👍🏽",
  "é",
  "\u0301",
  "ſ",
  "İstanbul",
  "ﬁne",
  "x/\n",
  "'s",
  "'",
  "a\u00a0b",
];

describe("chunkText cuts as the tokenizer's own pass does", () => {
  it("for texts built from the split pattern's cases (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 120 }),
        fc.constantFrom<ChunkingOptions>(
          { chunkTokens: 8, overlapTokens: 2 },
          { chunkTokens: 16, overlapTokens: 4 },
          { chunkTokens: 256, overlapTokens: 32 },
        ),
        (parts, opts) => {
          const text = parts.join("");
          expect(chunkText(text, opts)).toEqual(referenceChunks(text, opts));
          // The second time every piece's count comes from the memory: the same cuts.
          expect(chunkText(text, opts)).toEqual(referenceChunks(text, opts));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("for arbitrary strings (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (s) => {
        const opts = { chunkTokens: 12, overlapTokens: 3 };
        expect(chunkText(s, opts)).toEqual(referenceChunks(s, opts));
      }),
      { numRuns: 300 },
    );
  });

  it("for unspaced text whose pieces are longer than a chunk", () => {
    const text = Array.from({ length: 1500 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20000))).join("");
    const opts = { chunkTokens: 64, overlapTokens: 8 };
    expect(chunkText(text, opts)).toEqual(referenceChunks(text, opts));
  });
});
