import { compareBinary } from "../../src/domain/binary-order.js";
import { prng } from "../support/prng.js";

describe("compareBinary", () => {
  it("orders strings as their UTF-8 bytes do (SQLite's BINARY), surrogates and U+E000-U+FFFF included", () => {
    const rand = prng(11);
    // Characters around every boundary UTF-16 order gets wrong: ASCII, U+D7FF, U+E000-U+FFFF, astral.
    const alphabet = ["a", "b", "/", "#", "\u00e9", "\ud7ff", "\ue000", "\uffff", "\ufffd", "\u{10000}", "\u{1f600}", "\u{10ffff}"];
    const word = () => Array.from({ length: Math.floor(rand() * 5) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join("");
    for (let i = 0; i < 5_000; i++) {
      const a = word();
      const b = rand() < 0.2 ? a + word() : word();
      expect(Math.sign(compareBinary(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
    }
    expect(["\u{1f600}", "\ufffd", "z"].sort(compareBinary)).toEqual(["z", "\ufffd", "\u{1f600}"]);
  });
});
