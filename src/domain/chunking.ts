import { decode, encode, encodeGenerator } from "gpt-tokenizer";

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

// Special-token strings in user content are plain text, never control tokens.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** The longest run of code points measured as one piece when the tokenizer yields an oversize piece (e.g. unspaced CJK text). */
const SPLIT_CODE_POINTS = 64;

interface Piece {
  text: string;
  tokens: number;
}

/**
 * The tokenizer's pre-tokenized pieces with their token counts. Each piece is a run of whole characters
 * (the tokenizer splits on a character regex before BPE), so decoding one gives its exact text. A piece
 * longer than a chunk (e.g. unspaced CJK text) is cut every 64 code points and each part measured alone.
 */
function piecesOf(text: string, maxTokens: number): Piece[] {
  const pieces: Piece[] = [];
  for (const tokens of encodeGenerator(text, PLAIN_TEXT)) {
    if (tokens.length === 0) continue;
    const pieceText = decode(tokens);
    if (tokens.length <= maxTokens) {
      pieces.push({ text: pieceText, tokens: tokens.length });
      continue;
    }
    const cps = Array.from(pieceText);
    for (let i = 0; i < cps.length; i += SPLIT_CODE_POINTS) {
      const part = cps.slice(i, i + SPLIT_CODE_POINTS).join("");
      pieces.push({ text: part, tokens: encode(part, PLAIN_TEXT).length });
    }
  }
  return pieces;
}

/**
 * Cuts `text` into chunks of at most `chunkTokens` tokens (o200k_base, the tokenizer of current OpenAI
 * models), consecutive chunks sharing about `overlapTokens` tokens. Cuts fall between the tokenizer's
 * pieces (words with their leading space, punctuation runs), so a chunk never splits a word or a
 * character. The chunks, concatenated without their overlaps, give back `text`.
 * @example chunkText(doc, DEFAULT_CHUNKING) // ["first 256 tokens…", "…last 32 of those and on…"]
 */
export function chunkText(text: string, opts: ChunkingOptions = DEFAULT_CHUNKING): string[] {
  if (!(opts.chunkTokens > 0) || !(opts.overlapTokens >= 0) || opts.overlapTokens >= opts.chunkTokens) {
    throw new RangeError(`bad chunking options: ${opts.chunkTokens} tokens with ${opts.overlapTokens} overlap`);
  }
  if (text.length === 0) return [];
  const pieces = piecesOf(text, opts.chunkTokens);
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
