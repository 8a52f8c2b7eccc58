/**
 * SQLite FTS5's `unicode61` tokenizer (default options: remove_diacritics=1, token characters = the
 * Unicode letter, number and private-use categories), in TypeScript, so an in-memory keyword index
 * splits and folds text the way an FTS5 table does.
 *
 * - ASCII: `[0-9A-Za-z]` are token characters (so `_`, `-` and `'` separate), upper case folds to lower.
 * - Other code points: letters (L*), numbers (N*) and private use (Co) are token characters, and so are
 *   the combining diacritics U+0300–U+036F, which fold away to nothing.
 * - Folding lower-cases, then drops a single diacritic from a letter whose canonical decomposition is an
 *   ASCII letter plus one combining mark (`é → e`, `İ → i`); letters carrying two marks (`ǖ`) and other
 *   scripts' accented letters (`ά`, `ё`) keep them, as remove_diacritics=1 does.
 *
 * It is checked token for token against FTS5 itself in test/rag/unicode61-tokenizer.test.ts.
 */

const TOKEN_CHAR = /[\p{L}\p{N}\p{Co}\u0300-\u036f]/u;
const COMBINING_DIACRITIC = /^[\u0300-\u036f]$/u;

const foldCache = new Map<number, string>();

/** The folded form of one non-ASCII token code point ("" for a bare diacritic). */
function foldNonAscii(cp: number): string {
  const cached = foldCache.get(cp);
  if (cached !== undefined) return cached;
  const ch = String.fromCodePoint(cp);
  let out: string;
  if (COMBINING_DIACRITIC.test(ch)) out = "";
  else {
    const nfd = Array.from(ch.normalize("NFD"));
    if (nfd.length === 2 && nfd[0].charCodeAt(0) < 0x80 && COMBINING_DIACRITIC.test(nfd[1])) out = nfd[0].toLowerCase();
    else {
      const lower = ch.toLowerCase();
      // Only simple (one code point) case mappings apply.
      out = Array.from(lower).length === 1 ? lower : ch;
    }
  }
  if (foldCache.size < 65536) foldCache.set(cp, out);
  return out;
}

function isAsciiTokenChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/**
 * Splits `text` into folded tokens, in order (a token that folds to nothing, e.g. a lone diacritic, is
 * dropped, as FTS5 drops it).
 * @example tokenizeUnicode61("Café_Menu 2x") // ["cafe", "menu", "2x"]
 */
export function tokenizeUnicode61(text: string): string[] {
  const tokens: string[] = [];
  let current = "";
  let inToken = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (isAsciiTokenChar(c)) {
        current += c >= 0x41 && c <= 0x5a ? String.fromCharCode(c + 32) : text[i];
        inToken = true;
        continue;
      }
    } else {
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      if (cp > 0xffff) i++;
      if (TOKEN_CHAR.test(ch)) {
        current += foldNonAscii(cp);
        inToken = true;
        continue;
      }
    }
    if (inToken && current.length > 0) tokens.push(current);
    current = "";
    inToken = false;
  }
  if (inToken && current.length > 0) tokens.push(current);
  return tokens;
}
