import fc from "fast-check";
import { countTokens, decode, encode, encodeGenerator } from "gpt-tokenizer";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { chunkText, chunksOfPieces, createChunker, type ChunkingOptions } from "../../src/domain/chunking.js";

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

/** A chunker of its own (nothing remembered), counting the pieces it has BPE count. */
function freshChunker(): { chunkText: (text: string, opts: ChunkingOptions) => string[]; counted: string[] } {
  const counted: string[] = [];
  const chunker = createChunker({
    countTokens: (text, opts) => {
      counted.push(text);
      return countTokens(text, opts);
    },
    encodeGenerator,
    decode,
    encode,
    splitSource: O200K_TOKEN_SPLIT_REGEX.source,
  });
  return { chunkText: (text, opts) => chunker.chunkText(text, opts), counted };
}

/** Letters of several UTF-8 widths (1, 2, 3 and 4 bytes), so new words' bytes bound their tokens loosely or tightly. */
const LETTERS = ["a", "k", "z", "q", "é", "ж", "ש", "東", "語", "😀", "ꙮ"];

describe("a text whose new words surely fit one chunk is not counted", () => {
  it("cuts as the tokenizer's own pass does, counted or not (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom(...LETTERS), { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 40 }),
        (words, slack) => {
          const text = words.map((w) => " " + w.join("")).join("");
          // Around the text's own count: the bound decides some texts, counting the others.
          const tokens = countTokens(text, PLAIN_TEXT);
          const opts = { chunkTokens: Math.max(2, tokens - 20 + slack), overlapTokens: 1 };
          const fresh = freshChunker();
          expect(fresh.chunkText(text, opts)).toEqual(referenceChunks(text, opts));
          expect(fresh.chunkText(text, opts)).toEqual(referenceChunks(text, opts));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("gives a text whose bytes fit the chunk as it is, split or counted or not (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), fc.integer({ min: 1, max: 48 }), (text, chunkTokens) => {
        const opts = { chunkTokens, overlapTokens: 0 };
        const fresh = freshChunker();
        expect(fresh.chunkText(text, opts)).toEqual(referenceChunks(text, opts));
      }),
      { numRuns: 500 },
    );
  });

  it("counts no piece of a text whose bytes fit the chunk, and new pieces of one that may not fit until it surely does", () => {
    const fresh = freshChunker();
    const small = " zorblatt quenfix mirrodel";
    expect(Buffer.byteLength(small)).toBe(26);
    expect(fresh.chunkText(small, { chunkTokens: 32, overlapTokens: 4 })).toEqual([small]);
    expect(fresh.counted).toEqual([]);
    // Fewer tokens than the chunk holds, but a new piece's bound is more: whether it fits is only known by counting.
    const opts = { chunkTokens: 8, overlapTokens: 2 };
    expect(countTokens(small, PLAIN_TEXT)).toBeLessThanOrEqual(8);
    expect(fresh.chunkText(small, opts)).toEqual([small]);
    expect(fresh.counted.sort()).toEqual([" mirrodel", " quenfix", " zorblatt"]);
    // Counted once, remembered: the same text again counts nothing.
    expect(fresh.chunkText(small, opts)).toEqual([small]);
    expect(fresh.counted).toHaveLength(3);
  });

  it("bounds a new word by less than its bytes: two letters that are one token are never two", () => {
    // 26 bytes, 7 tokens. Letter pairs such as "zo", "or", "rb" are tokens of the vocabulary, so BPE never
    // leaves both letters of one as tokens alone: the new words' bound is about two thirds of their bytes.
    const small = " zorblatt quenfix mirrodel";
    const fresh = freshChunker();
    const opts = { chunkTokens: 20, overlapTokens: 4 };
    expect(fresh.chunkText(small, opts)).toEqual([small]);
    expect(fresh.counted).toEqual([]);
  });

  it("bounds a new word by about half its bytes: a letter beside a two-letter part that make a token are never both", () => {
    // With pairs alone the bound of these 26 bytes is 16 (the text needed counting for any chunk under 17);
    // many three-letter runs ("zor", "bla", "que", "mir") are tokens too, so a one-letter token never sits
    // beside a two-letter one it makes a token with: 13.
    const small = " zorblatt quenfix mirrodel";
    const fresh = freshChunker();
    expect(fresh.chunkText(small, { chunkTokens: 14, overlapTokens: 2 })).toEqual([small]);
    expect(fresh.counted).toEqual([]);
    // Under the bound the text is counted a new piece at a time, in order, each count taking the place of its
    // bound, until the text surely fits (here after its first piece: 2 tokens, bounded 4), and still cut as the
    // tokenizer's pass cuts it.
    const tight = { chunkTokens: 12, overlapTokens: 2 };
    expect(fresh.chunkText(small, tight)).toEqual(referenceChunks(small, tight));
    expect(fresh.counted).toEqual([" zorblatt"]);
    // Over its count (7 tokens), every piece is counted and the text cut into chunks.
    const tighter = { chunkTokens: 6, overlapTokens: 2 };
    expect(fresh.chunkText(small, tighter)).toEqual(referenceChunks(small, tighter));
    expect(fresh.chunkText(small, tighter)).toHaveLength(2);
    expect(fresh.counted).toEqual([" zorblatt", " quenfix", " mirrodel"]);
  });

  it("cuts ASCII text as the tokenizer's own pass does, with chunks around its count (property)", () => {
    const words = fc.array(fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.,-_!? "), {
      minLength: 1,
      maxLength: 14,
    });
    fc.assert(
      fc.property(fc.array(words, { minLength: 1, maxLength: 30 }), fc.integer({ min: -4, max: 4 }), (parts, delta) => {
        const text = parts.map((w) => " " + w.join("")).join("");
        // Just under the text's count the bound must not call it one chunk; at and over it, either way is right.
        const tokens = countTokens(text, PLAIN_TEXT);
        const opts = { chunkTokens: Math.max(2, tokens + delta), overlapTokens: 1 };
        const fresh = freshChunker();
        expect(fresh.chunkText(text, opts)).toEqual(referenceChunks(text, opts));
      }),
      { numRuns: 500 },
    );
  });

  it("bounds a new piece by its UTF-8 bytes, surrogate pairs and three-byte letters included", () => {
    // 3 emoji (4 bytes, 2 UTF-16 units each) and 4 CJK letters (3 bytes each) after a space: 25 bytes, fewer
    // tokens. The bound counts each UTF-16 unit past U+07FF as 3 bytes: 31.
    const text = " 😀😀😀東京都語";
    const tokens = countTokens(text, PLAIN_TEXT);
    expect(Buffer.byteLength(text)).toBe(25);
    for (let chunkTokens = Math.max(1, tokens - 2); chunkTokens <= 32; chunkTokens++) {
      const fresh = freshChunker();
      const opts = { chunkTokens, overlapTokens: 0 };
      expect(fresh.chunkText(text, opts)).toEqual(referenceChunks(text, opts));
      expect(fresh.counted.length > 0).toBe(chunkTokens < 31);
    }
  });
});
