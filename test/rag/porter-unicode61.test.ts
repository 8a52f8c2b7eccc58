import fc from "fast-check";
import { porterStem } from "../../src/domain/porter-stemmer.js";
import { tokenizeUnicode61 } from "../../src/domain/unicode61-tokenizer.js";
import { Fts5Oracle } from "./fts5-oracle.js";

const oracle = new Fts5Oracle();
afterAll(() => oracle.close());

const analyze = (text: string) => tokenizeUnicode61(text).map(porterStem);

// Words exercising every Porter step (Porter's own examples) plus FTS5's particulars.
const WORDS = `caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized
hopping tanned falling hissing fizzed failing filing happy sky relational conditional rational valenci hesitanci
digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism
decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti
electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant
replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize
probate rate cease controll roll generalizations oscillators yyy ay by says syzygy archaeology biologi rhythm
queueing eyeing dying lying tying crying studies flies skies boys toys cries yes yet you yea ied ies iess eeds
sses ss s es is as us ing ed eed beds fled ended meeting needed seeding agreeing bleed proceed succeed exceed
hopped hoped filing filling tapping taping rubbing robbing buzzing ponying conditioning internationalization
nationalities rationalities generously dangerously emotionless happiness sadnesses marvellous spelling`;

describe("unicode61 tokenizer and porter stemmer, against FTS5", () => {
  it("stems Porter's word list exactly as FTS5 does", () => {
    const words = WORDS.split(/\s+/).filter(Boolean);
    for (const w of words) expect([w, porterStem(w)]).toEqual([w, oracle.terms(w, true)[0]]);
  });

  it("stems random words over an English-like alphabet exactly as FTS5 does", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[abcdegilnorstuyz]{1,14}$/), (w) => {
        expect(analyze(w)).toEqual(oracle.terms(w, true));
      }),
      { numRuns: 3000 },
    );
  });

  it("tokenizes and folds mixed text exactly as FTS5 does", () => {
    const samples = [
      "Hello, World! foo_bar a-b it's C3PO x²³ ½",
      "café cafe\u0301 naïve Straße ØRSTED İstanbul ǅemal ŒUVRE ﬁne Ⅻ ｆｕｌｌ ǰ",
      "άλφα ёлка ñ ů ẞ ḁ ǖ Ǖ ṩ ǻ ĳ ŉ ⓐ ᾳ ΐ 日本語テキスト",
      "a\u0301b x\u0301 \u0301y é ç  tabs\tand\nnewlines",
      "emoji 😀 between 𐐀words 𝔘nicode",
    ];
    for (const s of samples) {
      expect(tokenizeUnicode61(s)).toEqual(oracle.terms(s, false));
      expect(analyze(s)).toEqual(oracle.terms(s, true));
    }
  });

  it("tokenizes random Unicode text exactly as FTS5 does (Latin, Greek, Cyrillic, marks, punctuation)", () => {
    const alphabet = fc.constantFrom(..."aAbBzZ09 _-.,'éÉñÑüÜçøÆßİıǖάΩжЖ\u0301\u0308日本½²!?\t\n".split(""));
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 40 }).map((a) => a.join("")),
        (s) => {
          expect(analyze(s)).toEqual(oracle.terms(s, true));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("leaves tokens shorter than 3 or longer than 64 bytes unstemmed", () => {
    expect(porterStem("is")).toBe("is");
    const long = "connecting".repeat(7);
    expect(porterStem(long)).toBe(long);
  });
});
