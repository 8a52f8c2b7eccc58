/**
 * Code-point order of two strings, which is UTF-8 byte order and SQLite's BINARY collation (UTF-16 code-unit
 * order, JavaScript's `<`, differs above U+D7FF), without encoding either: keyword answers order ties by UKO
 * URI this way, as SQL would.
 * @example ["\u{1F600}", "\uFFFD"].sort(compareBinary) // ["\uFFFD", "\u{1F600}"]
 */
export function compareBinary(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after U+E000–U+FFFF in code point order.
    if (x >= 0xd800) x += x < 0xe000 ? 0x2000 : -0x800;
    if (y >= 0xd800) y += y < 0xe000 ? 0x2000 : -0x800;
    return x - y;
  }
  return a.length - b.length;
}
