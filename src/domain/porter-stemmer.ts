/**
 * The Porter stemmer exactly as SQLite FTS5's `porter` tokenizer applies it, so that an index built in
 * memory (the BM25 fallback) produces the same terms as an FTS5 table declared `tokenize='porter unicode61'`.
 *
 * It is the original Porter (1980) algorithm with FTS5's particulars, kept on purpose:
 * - it works on the UTF-8 bytes of an already folded token: any byte that is not `a e i o u` (or a `y`
 *   after a consonant) is a consonant, so letters outside ASCII never match a suffix;
 * - tokens shorter than 3 bytes or longer than 64 bytes pass through unchanged;
 * - a rule's suffix must be strictly shorter than the word; within a step the longest listed suffix that
 *   matches decides, and when its condition fails no shorter suffix is tried;
 * - the `*v*` condition (steps 1b and 1c) counts `y` as a vowel anywhere but in first position;
 * - step 2 uses the revised rules `bli → ble` and `logi → log`.
 */

type Bytes = number[];
type Condition = (word: Bytes, stemLength: number) => boolean;

/** One rewrite: when the word ends in `suffix` and the rest satisfies `when`, replace it by `to`. */
interface Rule {
  suffix: Bytes;
  to: Bytes;
  when?: Condition;
}

const A = 0x61,
  E = 0x65,
  I = 0x69,
  L = 0x6c,
  O = 0x6f,
  S = 0x73,
  T = 0x74,
  U = 0x75,
  W = 0x77,
  X = 0x78,
  Y = 0x79,
  Z = 0x7a;

const bytesOf = (s: string): Bytes => Array.from(s, (c) => c.charCodeAt(0));

function isVowel(c: number, yIsVowel: boolean): boolean {
  return c === A || c === E || c === I || c === O || c === U || (yIsVowel && c === Y);
}

/** consonant flags of word[0..n): `y` is a vowel after a consonant, a consonant otherwise. */
function consonants(word: Bytes, n: number): boolean[] {
  const out: boolean[] = new Array(n);
  let prevConsonant = false;
  for (let i = 0; i < n; i++) {
    prevConsonant = !isVowel(word[i], prevConsonant);
    out[i] = prevConsonant;
  }
  return out;
}

/** Porter's measure m of word[0..n): the number of vowel-run → consonant-run transitions. */
function measure(word: Bytes, n: number): number {
  const cons = consonants(word, n);
  let m = 0;
  for (let i = 1; i < n; i++) if (cons[i] && !cons[i - 1]) m++;
  return m;
}

const mGt0: Condition = (w, n) => measure(w, n) > 0;
const mGt1: Condition = (w, n) => measure(w, n) > 1;
const mEq1: Condition = (w, n) => measure(w, n) === 1;

/** `*v*`: the stem holds a vowel (FTS5: `y` counts as one anywhere but at the start). */
const hasVowel: Condition = (w, n) => {
  for (let i = 0; i < n; i++) if (isVowel(w[i], i > 0)) return true;
  return false;
};

/** `*o`: the stem ends consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(w: Bytes, n: number): boolean {
  if (n < 3) return false;
  const last = w[n - 1];
  if (last === W || last === X || last === Y) return false;
  const cons = consonants(w, n);
  return cons[n - 3] && !cons[n - 2] && cons[n - 1];
}

/** `m > 1 and (*S or *T)`, the condition of step 4's `ion`. */
const mGt1AndSOrT: Condition = (w, n) => (w[n - 1] === S || w[n - 1] === T) && mGt1(w, n);

const rule = (suffix: string, to: string, when?: Condition): Rule => ({ suffix: bytesOf(suffix), to: bytesOf(to), when });

const STEP_1B: Rule[] = [rule("eed", "ee", mGt0), rule("ed", "", hasVowel), rule("ing", "", hasVowel)];
const STEP_1B2: Rule[] = [rule("at", "ate"), rule("bl", "ble"), rule("iz", "ize")];
const STEP_2: Rule[] = [
  rule("ational", "ate", mGt0),
  rule("tional", "tion", mGt0),
  rule("enci", "ence", mGt0),
  rule("anci", "ance", mGt0),
  rule("izer", "ize", mGt0),
  rule("logi", "log", mGt0),
  rule("bli", "ble", mGt0),
  rule("alli", "al", mGt0),
  rule("entli", "ent", mGt0),
  rule("eli", "e", mGt0),
  rule("ousli", "ous", mGt0),
  rule("ization", "ize", mGt0),
  rule("ation", "ate", mGt0),
  rule("ator", "ate", mGt0),
  rule("alism", "al", mGt0),
  rule("iveness", "ive", mGt0),
  rule("fulness", "ful", mGt0),
  rule("ousness", "ous", mGt0),
  rule("aliti", "al", mGt0),
  rule("iviti", "ive", mGt0),
  rule("biliti", "ble", mGt0),
];
const STEP_3: Rule[] = [
  rule("ical", "ic", mGt0),
  rule("ness", "", mGt0),
  rule("icate", "ic", mGt0),
  rule("iciti", "ic", mGt0),
  rule("ful", "", mGt0),
  rule("ative", "", mGt0),
  rule("alize", "al", mGt0),
];
const STEP_4: Rule[] = [
  rule("al", "", mGt1),
  rule("ance", "", mGt1),
  rule("ence", "", mGt1),
  rule("er", "", mGt1),
  rule("ic", "", mGt1),
  rule("able", "", mGt1),
  rule("ible", "", mGt1),
  rule("ant", "", mGt1),
  rule("ement", "", mGt1),
  rule("ment", "", mGt1),
  rule("ent", "", mGt1),
  rule("ion", "", mGt1AndSOrT),
  rule("ou", "", mGt1),
  rule("ism", "", mGt1),
  rule("ate", "", mGt1),
  rule("iti", "", mGt1),
  rule("ous", "", mGt1),
  rule("ive", "", mGt1),
  rule("ize", "", mGt1),
];

function endsWith(w: Bytes, suffix: Bytes): boolean {
  if (w.length <= suffix.length) return false;
  const off = w.length - suffix.length;
  for (let i = 0; i < suffix.length; i++) if (w[off + i] !== suffix[i]) return false;
  return true;
}

/**
 * Applies the first rule whose suffix the word ends in (every suffix of one step that can match a word
 * shares its next-to-last letter, so "first listed" is FTS5's "longest listed" choice) and returns it;
 * a matched suffix whose condition fails stops the step (undefined).
 */
function applyStep(w: Bytes, rules: readonly Rule[]): Rule | undefined {
  for (const r of rules) {
    if (!endsWith(w, r.suffix)) continue;
    const stem = w.length - r.suffix.length;
    if (r.when && !r.when(w, stem)) return undefined;
    w.length = stem;
    w.push(...r.to);
    return r;
  }
  return undefined;
}

function step1a(w: Bytes): void {
  const n = w.length;
  if (w[n - 1] !== S) return;
  if (w[n - 2] === E) {
    const sses = n > 4 && w[n - 4] === S && w[n - 3] === S;
    const ies = n > 3 && w[n - 3] === I;
    w.length = sses || ies ? n - 2 : n - 1;
  } else if (w[n - 2] !== S) w.length = n - 1;
}

function step1b(w: Bytes): void {
  const applied = applyStep(w, STEP_1B);
  // Only removing `ed` or `ing` goes on to the clean-up; `eed → ee` does not.
  if (applied === undefined || applied === STEP_1B[0]) return;
  if (applyStep(w, STEP_1B2)) return;
  const n = w.length;
  const c = w[n - 1];
  if (!isVowel(c, false) && c !== L && c !== S && c !== Z && n > 1 && c === w[n - 2]) w.length = n - 1;
  else if (mEq1(w, n) && endsCvc(w, n)) w.push(E);
}

function step1c(w: Bytes): void {
  const n = w.length;
  if (w[n - 1] === Y && hasVowel(w, n - 1)) w[n - 1] = I;
}

function step5(w: Bytes): void {
  let n = w.length;
  if (w[n - 1] === E && (mGt1(w, n - 1) || (mEq1(w, n - 1) && !endsCvc(w, n - 1)))) w.length = --n;
  if (n > 1 && w[n - 1] === L && w[n - 2] === L && mGt1(w, n - 1)) w.length = n - 1;
}

/** Tokens outside this byte-length range pass through unstemmed (FTS5's limits). */
const MIN_STEM_BYTES = 3;
const MAX_STEM_BYTES = 64;

/**
 * Stems one folded token (lower case, as the unicode61 tokenizer emits it) the way FTS5's `porter`
 * tokenizer does.
 * @example porterStem("relational") // "relat"
 */
export function porterStem(token: string): string {
  const bytes = Buffer.from(token, "utf8");
  if (bytes.length < MIN_STEM_BYTES || bytes.length > MAX_STEM_BYTES) return token;
  const w: Bytes = Array.from(bytes);
  step1a(w);
  step1b(w);
  step1c(w);
  applyStep(w, STEP_2);
  applyStep(w, STEP_3);
  applyStep(w, STEP_4);
  step5(w);
  return Buffer.from(w).toString("utf8");
}
