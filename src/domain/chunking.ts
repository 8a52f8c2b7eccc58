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

  /**
   * A tighter bound than its bytes on the tokens of a piece not counted before. BPE merges adjacent parts
   * while any two of them make a token, so in its answer no two neighbouring one-byte tokens make a token:
   * of two neighbouring ASCII characters that are a token together (most pairs of letters are), at most one
   * is a token alone. The bound is the most tokens a cut of the piece's bytes can have under that rule (every
   * token of two bytes or more allowed anywhere; bytes of non-ASCII characters, counted as `tokensAtMost`
   * counts them, never merge in it): about two thirds of an English word's bytes instead of all of them.
   */
  function newPieceTokensAtMost(piece: string): number {
    // After each byte: the most tokens of a cut of the bytes so far ending in a token of two bytes or more
    // (`longer`; the empty cut counts here, as 0), ending in a one-byte token (`single`), and of any cut
    // (`best`, and `bestBefore` one byte earlier); `previous` is the last byte, -1 when not ASCII. NONE
    // stands for no such cut.
    const NONE = -(1 << 30);
    let longer = 0;
    let single = NONE;
    let best = 0;
    let bestBefore = NONE;
    let previous = -1;
    for (let i = 0; i < piece.length; i++) {
      const unit = piece.charCodeAt(i);
      for (let n = unit <= 0x7f ? 1 : unit > 0x7ff ? 3 : 2; n > 0; n--) {
        const byte = unit <= 0x7f ? unit : -1;
        const afterSingle = previous < 0 || byte < 0 || !pairIsToken(previous, byte) ? single : NONE;
        const nextLonger = bestBefore + 1;
        const nextSingle = 1 + (longer > afterSingle ? longer : afterSingle);
        bestBefore = best;
        best = nextLonger > nextSingle ? nextLonger : nextSingle;
        longer = nextLonger;
        single = nextSingle;
        previous = byte;
      }
    }
    return best;
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
   * its new pieces' bounds fit is one chunk whatever their counts (new words were most of the BPE left).
   * Should a piece not split back into itself, the whole text takes the tokenizer's own pass.
   */
  function piecesOf(text: string, maxTokens: number): Array<{ text: string; tokens: number }> | "one chunk" {
    const pieces: Array<{ text: string; tokens: number }> = [];
    let covered = 0;
    /** The text's tokens at most: the known pieces' counts and the bytes of the others (marked -1 in `pieces`). */
    let atMost = 0;
    for (const [match] of text.matchAll(SPLIT)) {
      const known = pieceTokens.get(match);
      if (known !== undefined && known >= 0) {
        if (known > maxTokens) return piecesByTokenizer(text, maxTokens);
        pieces.push({ text: match, tokens: known });
        atMost += known;
      } else if (known !== undefined) {
        // Seen (it splits back into itself), bounded, not counted yet.
        pieces.push({ text: match, tokens: -1 });
        atMost += ~known;
      } else {
        SPLIT_ONE.lastIndex = 0;
        const again = SPLIT_ONE.exec(match);
        if (!again || again[0].length !== match.length) return piecesByTokenizer(text, maxTokens);
        const bound = newPieceTokensAtMost(match);
        if (pieceTokens.size >= PIECE_CACHE_SIZE) pieceTokens.clear();
        pieceTokens.set(match, ~bound);
        pieces.push({ text: match, tokens: -1 });
        atMost += bound;
      }
      covered += match.length;
    }
    // The pattern matches every character; should it ever skip one, the tokenizer's pass decides.
    if (covered !== text.length) return piecesByTokenizer(text, maxTokens);
    if (atMost <= maxTokens) return "one chunk";
    for (const piece of pieces) {
      if (piece.tokens >= 0) continue;
      piece.tokens = countPiece(piece.text);
      if (piece.tokens > maxTokens) return piecesByTokenizer(text, maxTokens);
    }
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
