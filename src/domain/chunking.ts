import { countTokens, decode, encode, encodeGenerator } from "gpt-tokenizer";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";

/** Tokens per server-made chunk: small enough for precise keyword hits, large enough to carry context. */
export const DEFAULT_CHUNK_TOKENS = 256;
/** Tokens shared by consecutive chunks, so a phrase cut at a boundary is still found whole in one chunk. */
export const DEFAULT_CHUNK_OVERLAP = 32;

/** How `chunkText` cuts: chunk size and overlap, in tokens of the o200k_base encoding. */
export interface ChunkingOptions {
  chunkTokens: number;
  overlapTokens: number;
}

/** The defaults: 256-token chunks overlapping by 32 tokens. */
export const DEFAULT_CHUNKING: ChunkingOptions = { chunkTokens: DEFAULT_CHUNK_TOKENS, overlapTokens: DEFAULT_CHUNK_OVERLAP };

/** What the chunker needs of the tokenizer (gpt-tokenizer's o200k_base functions and its pre-tokenizer's pattern). */
export interface ChunkerTokenizer {
  countTokens(text: string, opts: { disallowedSpecial: Set<string> }): number;
  encodeGenerator(text: string, opts: { disallowedSpecial: Set<string> }): Iterable<number[]>;
  decode(tokens: number[]): string;
  encode(text: string, opts: { disallowedSpecial: Set<string> }): number[];
  /** The source of the pre-tokenizer's regular expression (o200k_base's split pattern). */
  splitSource: string;
}

/** A chunker: `chunkText` and its packing step, over one tokenizer and one memory of pieces seen. */
export interface Chunker {
  chunkText(text: string, opts?: ChunkingOptions): string[];
  chunksOfPieces(pieces: ReadonlyArray<{ text: string; tokens: number }>, opts: ChunkingOptions): string[];
}

/**
 * Makes a chunker over `tok`. Self-contained (it names nothing outside its own body but `tok` and JavaScript's
 * globals) so that its source text also runs in a worker thread (src/adapters/kit/chunk-worker.ts), where
 * server-side chunking runs off the serving thread: the same code, hence the same chunks, in both places.
 */
export function createChunker(tok: ChunkerTokenizer): Chunker {
  // Special-token strings in user content are plain text, never control tokens.
  const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
  /** The longest run of code points measured as one piece when the tokenizer yields an oversize piece (e.g. unspaced CJK text). */
  const SPLIT_CODE_POINTS = 64;
  /** Distinct pieces whose token count is remembered (then the memory starts afresh): words recur, BPE is the cost. */
  const PIECE_CACHE_SIZE = 65_536;
  /** o200k_base's pre-tokenizer (the tokenizer splits text on it before BPE), and a sticky copy to re-split one piece. */
  const SPLIT = new RegExp(tok.splitSource, "gu");
  const SPLIT_ONE = new RegExp(tok.splitSource, "yu");
  /**
   * Token counts of pieces seen before, by piece text; a piece seen but never counted (its texts fitted a
   * chunk by its bound) holds its bound as ~bound (negative), so it is not bounded again.
   */
  const pieceTokens = new Map<string, number>();

  /**
   * The token count of one pre-tokenized piece that splits back into itself (so counting it alone gives its
   * count in the text: BPE runs on each piece independently), remembered.
   */
  function countPiece(piece: string): number {
    const known = pieceTokens.get(piece);
    if (known !== undefined && known >= 0) return known;
    const count = tok.countTokens(piece, PLAIN_TEXT);
    if (pieceTokens.size >= PIECE_CACHE_SIZE) pieceTokens.clear();
    pieceTokens.set(piece, count);
    return count;
  }

  /**
   * A bound on the tokens `piece` encodes to: its UTF-8 bytes (a token is one byte or more), counted from its
   * UTF-16 units (a unit past U+07FF is at most 3 bytes; each of a surrogate pair's is counted 3).
   */
  function tokensAtMost(piece: string): number {
    let bytes = piece.length;
    for (let i = 0; i < piece.length; i++) {
      const unit = piece.charCodeAt(i);
      if (unit > 0x7f) bytes += unit > 0x7ff ? 2 : 1;
    }
    return bytes;
  }

  /** Whether two ASCII characters (a * 128 + b) are one token of the vocabulary: 0 not asked yet, 1 yes, 2 no. */
  const asciiPairs = new Uint8Array(128 * 128);

  function pairIsToken(a: number, b: number): boolean {
    const k = a * 128 + b;
    let known = asciiPairs[k];
    // Encoded alone, a pair the pre-tokenizer splits counts 2 whatever the vocabulary: "no" is always safe here.
    if (known === 0) asciiPairs[k] = known = tok.encode(String.fromCharCode(a, b), PLAIN_TEXT).length === 1 ? 1 : 2;
    return known === 1;
  }

  /** Whether three ASCII characters ((a * 128 + b) * 128 + c) are one token: as `asciiPairs` (2 MiB, like the pairs' table). */
  const asciiTriples = new Uint8Array(128 * 128 * 128);

  function tripleIsToken(a: number, b: number, c: number): boolean {
    const k = (a * 128 + b) * 128 + c;
    let known = asciiTriples[k];
    // As with pairs, "no" is always safe here: it only allows more cuts.
    if (known === 0) asciiTriples[k] = known = tok.encode(String.fromCharCode(a, b, c), PLAIN_TEXT).length === 1 ? 1 : 2;
    return known === 1;
  }

  /** Scratch arrays of `newPieceTokensAtMost`, grown as pieces need (pieces are mostly words: a few bytes). */
  let scratchBytes = new Int16Array(64);
  let scratchParts = new Int32Array(3 * 65);

  /**
   * A tighter bound than its bytes on the tokens of a piece not counted before. BPE merges two neighbouring
   * parts while any two of them make a token together, so in its answer no two neighbouring tokens do. The
   * bound is the most parts a cut of the piece's bytes can have under the part of that rule it can check
   * cheaply: no two neighbouring one-byte parts that are a token together (most pairs of letters are), no
   * one-byte part beside a two-byte part that make a three-byte token together (many triples of letters do);
   * parts of two bytes and of three or more are allowed anywhere else (a part of six or more would only be
   * split into more). The answer's own cut obeys the rule, so it is among those counted: the bound is never
   * below it. Bytes of non-ASCII characters (counted as `tokensAtMost` counts them) never make a token in it.
   * About half an English word's bytes instead of all of them.
   */
  function newPieceTokensAtMost(piece: string): number {
    // The piece's bytes: ASCII bytes as themselves, every other byte -1 (never part of a known token).
    const n = tokensAtMost(piece);
    if (scratchBytes.length < n) scratchBytes = new Int16Array(2 * n);
    if (scratchParts.length < 3 * (n + 1)) scratchParts = new Int32Array(6 * (n + 1));
    const b = scratchBytes;
    for (let i = 0, j = 0; i < piece.length; i++) {
      const unit = piece.charCodeAt(i);
      if (unit <= 0x7f) b[j++] = unit;
      else for (let k = unit > 0x7ff ? 3 : 2; k > 0; k--) b[j++] = -1;
    }
    const NONE = -(1 << 30);
    // After i bytes: the most parts of a cut ending in a one-byte part (one(i)), a two-byte part (two(i)), a
    // part of three to five bytes (long(i); the empty cut counts here, as 0).
    const parts = scratchParts;
    parts.fill(NONE, 0, 3 * (n + 1));
    const ONE = 0;
    const TWO = n + 1;
    const LONG = 2 * (n + 1);
    parts[LONG] = 0;
    const pair = (x: number, y: number) => x >= 0 && y >= 0 && pairIsToken(x, y);
    const triple = (x: number, y: number, z: number) => x >= 0 && y >= 0 && z >= 0 && tripleIsToken(x, y, z);
    for (let i = 0; i < n; i++) {
      const one = parts[ONE + i];
      const two = parts[TWO + i];
      const long = parts[LONG + i];
      // A one-byte part b[i]: after a longer part, after a one-byte part it makes no token with, after a
      // two-byte part it makes no token with.
      let best = long;
      if (one > best && !pair(b[i - 1], b[i])) best = one;
      if (two > best && !triple(b[i - 2], b[i - 1], b[i])) best = two;
      if (best > NONE) parts[ONE + i + 1] = best + 1;
      // A two-byte part b[i] b[i + 1]: after a part of two bytes or more, after a one-byte part it makes no token with.
      if (i + 2 <= n) {
        let before = long > two ? long : two;
        if (one > before && !triple(b[i - 1], b[i], b[i + 1])) before = one;
        if (before > NONE && before + 1 > parts[TWO + i + 2]) parts[TWO + i + 2] = before + 1;
      }
      // A part of three to five bytes, after any.
      const any = Math.max(one, two, long);
      if (any > NONE) for (let m = 3; m <= 5 && i + m <= n; m++) if (any + 1 > parts[LONG + i + m]) parts[LONG + i + m] = any + 1;
    }
    return Math.max(parts[ONE + n], parts[TWO + n], parts[LONG + n]);
  }

  /**
   * The tokenizer's pre-tokenized pieces with their token counts, or `"one chunk"` when the whole text
   * surely fits `maxTokens` (then no piece needs counting). Each piece is a run of whole characters
   * (the tokenizer splits on a character regex before BPE), so decoding one gives its exact text. A piece
   * longer than a chunk (e.g. unspaced CJK text) is cut every 64 code points and each part measured alone.
   * The pieces come from the tokenizer's own split pattern and their counts from a memory of pieces seen
   * before (most words recur: BPE on every one was most of an upload's CPU); a piece not seen before is
   * counted only when the text might not fit one chunk: a new piece's tokens are bounded without BPE
   * (`newPieceTokensAtMost`: about two thirds of an English word's bytes), so a text whose known counts plus
   * its new pieces' bounds fit is one chunk whatever their counts (new words were most of the BPE left); one
   * that may not fit has its new pieces counted in order only until it surely does (a text of new words a
   * little over the chunk by its bounds needs a few counted, not all).
   * Should a piece not split back into itself, the whole text takes the tokenizer's own pass.
   */
  function piecesOf(text: string, maxTokens: number): Array<{ text: string; tokens: number }> | "one chunk" {
    // Every piece at once, as strings (one call; iterating the matches built an array per piece), and each
    // one's count (~bound, negative, while not counted): the pieces themselves are built only for a text past one chunk.
    const matches = text.match(SPLIT);
    if (matches === null) return piecesByTokenizer(text, maxTokens);
    const counts: number[] = new Array<number>(matches.length);
    let covered = 0;
    /** The text's tokens at most: the known pieces' counts and the bounds of the others. */
    let atMost = 0;
    for (let i = 0; i < matches.length; i++) {
      const match = matches[i];
      const known = pieceTokens.get(match);
      if (known !== undefined && known >= 0) {
        if (known > maxTokens) return piecesByTokenizer(text, maxTokens);
        counts[i] = known;
        atMost += known;
      } else if (known !== undefined) {
        // Seen (it splits back into itself), bounded, not counted yet.
        counts[i] = known;
        atMost += ~known;
      } else {
        SPLIT_ONE.lastIndex = 0;
        const again = SPLIT_ONE.exec(match);
        if (!again || again[0].length !== match.length) return piecesByTokenizer(text, maxTokens);
        const bound = newPieceTokensAtMost(match);
        if (pieceTokens.size >= PIECE_CACHE_SIZE) pieceTokens.clear();
        pieceTokens.set(match, ~bound);
        counts[i] = ~bound;
        atMost += bound;
      }
      covered += match.length;
    }
    // The pattern matches every character; should it ever skip one, the tokenizer's pass decides.
    if (covered !== text.length) return piecesByTokenizer(text, maxTokens);
    // Uncounted pieces (their bound held as ~bound) are counted in order, each count taking the place of its
    // bound, until the text surely fits one chunk (most of a text's new pieces then need no BPE) or all are counted.
    for (let i = 0; i < matches.length && atMost > maxTokens; i++) {
      if (counts[i] >= 0) continue;
      const tokens = countPiece(matches[i]);
      if (tokens > maxTokens) return piecesByTokenizer(text, maxTokens);
      atMost -= ~counts[i] - tokens;
      counts[i] = tokens;
    }
    if (atMost <= maxTokens) return "one chunk";
    const pieces: Array<{ text: string; tokens: number }> = new Array(matches.length);
    for (let i = 0; i < matches.length; i++) pieces[i] = { text: matches[i], tokens: counts[i] };
    return pieces;
  }

  /** `piecesOf` by the tokenizer's own pass over the whole text (pieces decoded from their tokens). */
  function piecesByTokenizer(text: string, maxTokens: number): Array<{ text: string; tokens: number }> {
    const pieces: Array<{ text: string; tokens: number }> = [];
    for (const tokens of tok.encodeGenerator(text, PLAIN_TEXT)) {
      if (tokens.length === 0) continue;
      const pieceText = tok.decode(tokens);
      if (tokens.length <= maxTokens) {
        pieces.push({ text: pieceText, tokens: tokens.length });
        continue;
      }
      const cps = Array.from(pieceText);
      for (let i = 0; i < cps.length; i += SPLIT_CODE_POINTS) {
        const part = cps.slice(i, i + SPLIT_CODE_POINTS).join("");
        pieces.push({ text: part, tokens: tok.encode(part, PLAIN_TEXT).length });
      }
    }
    return pieces;
  }

  /**
   * Packs consecutive pieces (each with its token count) into chunks of at most `opts.chunkTokens` tokens (a
   * piece larger than that is a chunk of its own), each chunk after the first starting with the last pieces of
   * the one before, up to `opts.overlapTokens` tokens.
   */
  function chunksOfPieces(pieces: ReadonlyArray<{ text: string; tokens: number }>, opts: ChunkingOptions): string[] {
    const chunks: string[] = [];
    let i = 0;
    while (i < pieces.length) {
      let j = i;
      let count = 0;
      while (j < pieces.length && (j === i || count + pieces[j].tokens <= opts.chunkTokens)) {
        count += pieces[j].tokens;
        j += 1;
      }
      chunks.push(
        pieces
          .slice(i, j)
          .map((p) => p.text)
          .join(""),
      );
      if (j >= pieces.length) break;
      let k = j;
      let overlap = 0;
      while (k - 1 > i && overlap + pieces[k - 1].tokens <= opts.overlapTokens) {
        overlap += pieces[k - 1].tokens;
        k -= 1;
      }
      i = k;
    }
    return chunks;
  }

  function chunkText(text: string, opts: ChunkingOptions = { chunkTokens: 256, overlapTokens: 32 }): string[] {
    if (!(opts.chunkTokens > 0) || !(opts.overlapTokens >= 0) || opts.overlapTokens >= opts.chunkTokens) {
      throw new RangeError(`bad chunking options: ${opts.chunkTokens} tokens with ${opts.overlapTokens} overlap`);
    }
    if (text.length === 0) return [];
    // A text of no more UTF-8 bytes than the chunk holds tokens fits it whatever its pieces (a short note, a memory).
    if (text.length <= opts.chunkTokens && tokensAtMost(text) <= opts.chunkTokens) return [text];
    const pieces = piecesOf(text, opts.chunkTokens);
    return pieces === "one chunk" ? [text] : chunksOfPieces(pieces, opts);
  }

  return { chunkText, chunksOfPieces };
}

/** The chunker of this thread. */
const chunker = createChunker({ countTokens, encodeGenerator, decode, encode, splitSource: O200K_TOKEN_SPLIT_REGEX.source });

/**
 * Cuts `text` into chunks of at most `chunkTokens` tokens (o200k_base, the tokenizer of current OpenAI
 * models), consecutive chunks sharing about `overlapTokens` tokens. Cuts fall between the tokenizer's
 * pieces (words with their leading space, punctuation runs), so a chunk never splits a word or a
 * character. The chunks, concatenated without their overlaps, give back `text`.
 * @example chunkText(doc, DEFAULT_CHUNKING) // ["first 256 tokens…", "…last 32 of those and on…"]
 */
export function chunkText(text: string, opts: ChunkingOptions = DEFAULT_CHUNKING): string[] {
  return chunker.chunkText(text, opts);
}

/**
 * Packs consecutive pieces (each with its token count) into chunks of at most `opts.chunkTokens` tokens (a
 * piece larger than that is a chunk of its own), each chunk after the first starting with the last pieces of
 * the one before, up to `opts.overlapTokens` tokens.
 */
export function chunksOfPieces(pieces: ReadonlyArray<{ text: string; tokens: number }>, opts: ChunkingOptions): string[] {
  return chunker.chunksOfPieces(pieces, opts);
}
