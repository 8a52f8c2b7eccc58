/**
 * A path glob compiled to a finite automaton and matched by simulating every state at once (Thompson's
 * construction), so matching costs at most the path's length times the automaton's size whatever the
 * pattern: no backtracking, so no pattern can take exponential time. Regex-based matchers (micromatch,
 * picomatch) backtrack: `+(a*)` or `{a,aa}` repeated thirty times against a 45-letter file name took
 * minutes, on the serving thread.
 *
 * Syntax (dot files match like any other): `?` one character but `/`; `*` any run within a segment;
 * a `**` segment any number of whole segments (`a/**` also matches `a`); `[abc]`, `[a-z]`, `[!a]` / `[^a]`
 * and `[[:alpha:]]`-style classes, one character but `/`; `{a,b}` alternatives (nested, may hold any of
 * the above); `{1..20}` and `{a..e}` ranges; `\x` the character x. Refused, as a bad glob: extglob groups
 * (`+(...)`, `@(...)`, `!(...)`, `*(...)`, `?(...)`), bare `(`, `)` and `|` (regex-like groups some glob
 * libraries read; escape them to match them), a leading `!` (negation: use an exclude list), unclosed `[`.
 */

/** Why a glob cannot be compiled: the message names the problem for the caller. */
export class GlobSyntaxError extends Error {}

/** The most automaton states one pattern may compile to (bounds matching cost per path character). */
export const MAX_GLOB_STATES = 20_000;

/** The most values a stepped, padded or negative brace range may expand to. */
export const MAX_RANGE_VALUES = 1000;

type CharTest = (c: number) => boolean;

/** AST nodes. */
type Node =
  | { t: "char"; test: CharTest }
  | { t: "seq"; items: Node[] }
  | { t: "alt"; options: Node[] }
  | { t: "star"; test: CharTest }
  | { t: "globstar-dirs" }
  | { t: "slash-tail"; orNothing: boolean }
  | { t: "anything" };

const SLASH = 0x2f;
const notSlash: CharTest = (c) => c !== SLASH;
const anyChar: CharTest = () => true;
const lit = (ch: string): Node => {
  const code = ch.codePointAt(0) as number;
  return { t: "char", test: (c) => c === code };
};
const seqOf = (s: string): Node => ({ t: "seq", items: Array.from(s, lit) });

const POSIX_CLASSES: Record<string, CharTest> = {
  alpha: (c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122),
  digit: (c) => c >= 48 && c <= 57,
  alnum: (c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57),
  upper: (c) => c >= 65 && c <= 90,
  lower: (c) => c >= 97 && c <= 122,
  space: (c) => c === 32 || (c >= 9 && c <= 13),
  word: (c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95,
  xdigit: (c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102),
  punct: (c) => (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126),
};

/** A digit class `[lo-hi]`. */
const digits = (lo: number, hi: number): Node => ({ t: "char", test: (c) => c >= 48 + lo && c <= 48 + hi });

/** The decimal strings of [a, b], both of the same length, as alternatives of digit-class sequences. */
function sameLengthRange(a: string, b: string): Node {
  if (a.length === 0) return { t: "seq", items: [] };
  const a0 = Number(a[0]);
  const b0 = Number(b[0]);
  const restA = a.slice(1);
  const restB = b.slice(1);
  if (a0 === b0) return { t: "seq", items: [digits(a0, a0), sameLengthRange(restA, restB)] };
  const nines = "9".repeat(restA.length);
  const zeros = "0".repeat(restA.length);
  const options: Node[] = [{ t: "seq", items: [digits(a0, a0), sameLengthRange(restA, nines)] }];
  if (b0 - a0 > 1) options.push({ t: "seq", items: [digits(a0 + 1, b0 - 1), ...Array.from(restA, () => digits(0, 9))] });
  options.push({ t: "seq", items: [digits(b0, b0), sameLengthRange(zeros, restB)] });
  return { t: "alt", options };
}

/** `{lo..hi}` over non-negative integers without padding: every decimal in range, in O(digits²) nodes. */
function decimalRange(lo: number, hi: number): Node {
  const options: Node[] = [];
  for (let len = String(lo).length; len <= String(hi).length; len++) {
    const from = Math.max(lo, len === 1 ? 0 : 10 ** (len - 1));
    const to = Math.min(hi, 10 ** len - 1);
    if (from <= to) options.push(sameLengthRange(String(from), String(to)));
  }
  return { t: "alt", options };
}

/** A brace body without a top-level comma that reads as a range, or undefined (then it is literal). */
function braceRange(body: string): Node | undefined {
  const num = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(body);
  if (num) {
    const [, a, b, s] = num;
    const lo = Number(a);
    const hi = Number(b);
    if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi)) throw new GlobSyntaxError(`the range {${body}} is out of bounds`);
    const padded = /^-?0\d/.test(a) || /^-?0\d/.test(b);
    const width = padded ? Math.max(a.replace("-", "").length, b.replace("-", "").length) : 0;
    if (s === undefined && lo >= 0 && hi >= 0) {
      if (!padded) return decimalRange(Math.min(lo, hi), Math.max(lo, hi));
      // Every value padded to one width: the same digit-class construction, never one option per value
      // (`{001..999}` enumerated was 4,000 states and 28 ms to compile four times over in one pattern).
      const [from, to] = [Math.min(lo, hi), Math.max(lo, hi)].map((v) => String(v).padStart(width, "0"));
      return sameLengthRange(from, to);
    }
    const step = Math.abs(Number(s ?? 1)) || 1;
    const count = Math.floor(Math.abs(hi - lo) / step) + 1;
    if (count > MAX_RANGE_VALUES) throw new GlobSyntaxError(`the range {${body}} has more than ${MAX_RANGE_VALUES} values`);
    const dir = hi >= lo ? 1 : -1;
    const options: Node[] = [];
    for (let k = 0, v = lo; k < count; k++, v += dir * step) {
      const abs = String(Math.abs(v)).padStart(width, "0");
      options.push(seqOf(v < 0 ? `-${abs}` : abs));
    }
    return { t: "alt", options };
  }
  const letters = /^([A-Za-z])\.\.([A-Za-z])$/.exec(body);
  if (letters) {
    const x = letters[1].charCodeAt(0);
    const y = letters[2].charCodeAt(0);
    const lo = Math.min(x, y);
    const hi = Math.max(x, y);
    return { t: "char", test: (c) => c >= lo && c <= hi };
  }
  return undefined;
}

class Parser {
  private i = 0;
  private readonly chars: string[];

  private readonly pattern: string;

  constructor(pattern: string) {
    // A leading `./` means the same as none (document paths are relative).
    let from = 0;
    while (pattern.startsWith("./", from)) from += 2;
    this.pattern = pattern.slice(from);
    this.chars = Array.from(this.pattern);
  }

  parse(): Node {
    if (this.chars[0] === "!") throw new GlobSyntaxError("a leading '!' (negation) is not supported: use exclude_paths");
    if (this.pattern === "**") return { t: "anything" };
    const node = this.sequence(false);
    if (this.i < this.chars.length) throw new GlobSyntaxError(`unexpected '${this.chars[this.i]}' at ${this.i}`);
    return node;
  }

  /** Parses items until the end, or (inside braces) an unescaped top-level `,` or `}`. */
  private sequence(inBraces: boolean): Node {
    const items: Node[] = [];
    const c = this.chars;
    while (this.i < c.length) {
      const ch = c[this.i];
      if (inBraces && (ch === "," || ch === "}")) break;
      if ((ch === "+" || ch === "@" || ch === "!" || ch === "*" || ch === "?") && c[this.i + 1] === "(") {
        throw new GlobSyntaxError(
          `extglob groups such as '${ch}(...)' are not supported; use {a,b} for alternatives, or escape the '(' (\\() to match it`,
        );
      }
      if (ch === "(" || ch === ")" || ch === "|") {
        throw new GlobSyntaxError(`'${ch}' must be escaped (\\${ch}) to match it; use {a,b} for alternatives`);
      }
      if (ch === "\\") {
        if (this.i + 1 >= c.length) throw new GlobSyntaxError("the pattern ends with a lone '\\'");
        items.push(lit(c[this.i + 1]));
        this.i += 2;
      } else if (ch === "*") {
        let j = this.i;
        while (c[j] === "*") j += 1;
        const atSegmentStart = this.i === 0 || c[this.i - 1] === "/";
        const atSegmentEnd = j === c.length || c[j] === "/";
        if (j - this.i === 2 && atSegmentStart && atSegmentEnd) {
          if (j === c.length) {
            // A final `**` whose `/` a `**/` before it consumed (a final `/**` is read with its `/`).
            items.push({ t: "anything" });
            this.i = j;
          } else {
            items.push({ t: "globstar-dirs" });
            this.i = j + 1;
          }
        } else {
          items.push({ t: "star", test: notSlash });
          this.i = j;
        }
      } else if (ch === "/" && this.i + 3 === c.length && c[this.i + 1] === "*" && c[this.i + 2] === "*") {
        // A final `/**`: `/` and anything, or nothing more
        // unless a `*` ends it (`docs/**` matches `docs` too, `*/**` no top-level file; as micromatch reads them).
        items.push({ t: "slash-tail", orNothing: c[this.i - 1] !== "*" });
        this.i = c.length;
      } else if (ch === "?") {
        items.push({ t: "char", test: notSlash });
        this.i += 1;
      } else if (ch === "[") {
        items.push(this.bracket());
      } else if (ch === "{") {
        items.push(this.brace());
      } else {
        items.push(lit(ch));
        this.i += 1;
      }
    }
    return { t: "seq", items };
  }

  private bracket(): Node {
    const c = this.chars;
    let j = this.i + 1;
    let negated = false;
    if (c[j] === "!" || c[j] === "^") {
      negated = true;
      j += 1;
    }
    const tests: CharTest[] = [];
    let first = true;
    for (;;) {
      if (j >= c.length) throw new GlobSyntaxError(`the '[' at ${this.i} is never closed`);
      let ch = c[j];
      if (ch === "]" && !first) break;
      first = false;
      if (ch === "[" && c[j + 1] === ":") {
        const close = c.indexOf(":", j + 2);
        const name = close > 0 && c[close + 1] === "]" ? c.slice(j + 2, close).join("") : undefined;
        const test = name === undefined ? undefined : POSIX_CLASSES[name];
        if (!test) throw new GlobSyntaxError(`unknown character class at ${j}`);
        tests.push(test);
        j = close + 2;
        continue;
      }
      if (ch === "\\") {
        j += 1;
        if (j >= c.length) throw new GlobSyntaxError(`the '[' at ${this.i} is never closed`);
        ch = c[j];
      }
      const lo = ch.codePointAt(0) as number;
      if (c[j + 1] === "-" && c[j + 2] !== undefined && c[j + 2] !== "]") {
        let hiCh = c[j + 2];
        let step = 3;
        if (hiCh === "\\") {
          hiCh = c[j + 3] ?? "";
          step = 4;
        }
        const hi = hiCh.codePointAt(0) ?? -1;
        if (hi < lo) throw new GlobSyntaxError(`the range ${ch}-${hiCh} is reversed`);
        tests.push((x) => x >= lo && x <= hi);
        j += step;
      } else {
        tests.push((x) => x === lo);
        j += 1;
      }
    }
    this.i = j + 1;
    return { t: "char", test: (x) => x !== SLASH && tests.some((t) => t(x)) !== negated };
  }

  private brace(): Node {
    const start = this.i;
    const close = this.matchingBrace(start);
    if (close < 0) {
      this.i += 1;
      return lit("{");
    }
    const body = this.chars.slice(start + 1, close).join("");
    if (!this.hasTopLevelComma(start, close)) {
      this.i = close + 1;
      return braceRange(body) ?? seqOf(`{${body}}`);
    }
    this.i = start + 1;
    const options: Node[] = [];
    for (;;) {
      options.push(this.sequence(true));
      const ch = this.chars[this.i];
      this.i += 1;
      if (ch === "}") break;
    }
    return { t: "alt", options };
  }

  /** The index of the `}` closing the `{` at `start`, or -1. */
  private matchingBrace(start: number): number {
    let depth = 0;
    for (let j = start; j < this.chars.length; j++) {
      const ch = this.chars[j];
      if (ch === "\\") j += 1;
      else if (ch === "{") depth += 1;
      else if (ch === "}" && --depth === 0) return j;
    }
    return -1;
  }

  private hasTopLevelComma(start: number, close: number): boolean {
    let depth = 0;
    for (let j = start + 1; j < close; j++) {
      const ch = this.chars[j];
      if (ch === "\\") j += 1;
      else if (ch === "{") depth += 1;
      else if (ch === "}") depth -= 1;
      else if (ch === "," && depth === 0) return true;
    }
    return false;
  }
}

/**
 * The automaton: state k either consumes one character passing `test[k]` and moves to `next[k]`, or
 * (test undefined) is an epsilon split to `next[k]` and `alt[k]` (-1 when none). State 0 is the start,
 * `accept` the accepting state.
 */
interface Automaton {
  test: Array<CharTest | undefined>;
  next: number[];
  alt: number[];
  accept: number;
}

class Builder {
  readonly a: Automaton = { test: [], next: [], alt: [], accept: -1 };

  state(test: CharTest | undefined, next = -1, alt = -1): number {
    if (this.a.test.length >= MAX_GLOB_STATES) throw new GlobSyntaxError(`the pattern is too complex (over ${MAX_GLOB_STATES} states)`);
    this.a.test.push(test);
    this.a.next.push(next);
    this.a.alt.push(alt);
    return this.a.test.length - 1;
  }

  /** Builds `node` so that it continues to `out`; returns its entry state. */
  build(node: Node, out: number): number {
    switch (node.t) {
      case "char":
        return this.state(node.test, out);
      case "seq": {
        let entry = out;
        for (let k = node.items.length - 1; k >= 0; k--) entry = this.build(node.items[k], entry);
        return entry;
      }
      case "alt": {
        if (node.options.length === 0) return out;
        let entry = this.build(node.options[node.options.length - 1], out);
        for (let k = node.options.length - 2; k >= 0; k--) entry = this.state(undefined, this.build(node.options[k], out), entry);
        return entry;
      }
      case "star":
        return this.loop(node.test, out);
      case "anything":
        return this.loop(anyChar, out);
      case "globstar-dirs": {
        // (segment "/")*: a split that leaves, or reads one non-slash character, more, then a slash.
        const loop = this.state(undefined, -1, out);
        const slash = this.state((c) => c === SLASH, loop);
        const more = this.state(undefined, -1, slash);
        const firstChar = this.state(notSlash, more);
        this.a.next[more] = this.state(notSlash, more);
        this.a.next[loop] = firstChar;
        return loop;
      }
      case "slash-tail": {
        // "" or "/" followed by anything.
        const rest = this.loop(anyChar, out);
        const slash = this.state((c) => c === SLASH, rest);
        return node.orNothing ? this.state(undefined, slash, out) : slash;
      }
    }
  }

  /** `test`*: a split that either reads one more character and comes back, or leaves to `out`. */
  private loop(test: CharTest, out: number): number {
    const split = this.state(undefined, -1, out);
    this.a.next[split] = this.state(test, split);
    return split;
  }
}

/** A compiled glob. */
export interface GlobMatcher {
  /** The automaton's size: what compiling cost and what the matcher holds (scope budgets count it). */
  readonly states: number;
  matches(path: string): boolean;
}

/**
 * Compiles a glob (see the file comment for the syntax); throws GlobSyntaxError for what it refuses.
 * @example compileGlob("src/**\/*.{ts,js}").matches("src/a/b.ts") // true
 */
export function compileGlob(pattern: string): GlobMatcher {
  const ast = new Parser(pattern).parse();
  const b = new Builder();
  const accept = b.state(undefined);
  const entry = b.build(ast, accept);
  const { test, next, alt } = b.a;
  const size = test.length;
  const mark = new Int32Array(size).fill(-1);
  let current = new Int32Array(size);
  let following = new Int32Array(size);
  let generation = 0;
  return {
    states: size,
    matches(path: string): boolean {
      if (generation > 0x3fffffff) {
        mark.fill(-1);
        generation = 0;
      }
      generation += 1;
      let count = 0;
      let nextCount = 0;
      // Adds state s and every state reachable from it by epsilon moves to `into` (iteratively: no recursion depth).
      const stack: number[] = [];
      const add = (s: number, into: Int32Array, n: number): number => {
        stack.push(s);
        while (stack.length > 0) {
          const k = stack.pop() as number;
          if (k < 0 || mark[k] === generation) continue;
          mark[k] = generation;
          if (test[k] === undefined) {
            if (k === accept) into[n++] = k;
            stack.push(alt[k], next[k]);
          } else into[n++] = k;
        }
        return n;
      };
      count = add(entry, current, 0);
      for (const ch of path) {
        const c = ch.codePointAt(0) as number;
        generation += 1;
        nextCount = 0;
        for (let k = 0; k < count; k++) {
          const s = current[k];
          const t = test[s];
          if (t !== undefined && t(c)) nextCount = add(next[s], following, nextCount);
        }
        [current, following] = [following, current];
        count = nextCount;
        if (count === 0) return false;
      }
      for (let k = 0; k < count; k++) if (current[k] === accept) return true;
      return false;
    },
  };
}
