import { InvalidArgumentError, type FieldViolation } from "./errors.js";
import { compileGlob, GlobSyntaxError } from "./glob-matcher.js";

/** The longest glob pattern accepted. */
export const MAX_GLOB_LENGTH = 1024;

/**
 * Bounds on wildcards. Globs are matched by an automaton (glob-matcher.ts), which cannot backtrack, so these
 * no longer stand between a pattern and minutes of matching (with the regex matcher used before,
 * `*a*a*a*a*b` against a 1,000-character segment took minutes); they keep the automaton's live states,
 * hence the cost per path character, small. A pattern may hold at most MAX_GLOBSTARS `**` segments, a
 * segment at most MAX_SEGMENT_STARS runs of `*`, and a pattern at most MAX_WILDCARDS of both in all
 * (ordinary patterns such as `src/**` followed by `/*.test.ts`, or `**` + `/node_modules/**`, use two).
 */
export const MAX_GLOBSTARS = 2;
export const MAX_SEGMENT_STARS = 2;
export const MAX_WILDCARDS = 4;

function wildcardProblem(pattern: string): string | undefined {
  const segments = pattern.split("/");
  const globstars = segments.filter((seg) => seg === "**").length;
  if (globstars > MAX_GLOBSTARS) return `the pattern has ${globstars} '**' segments; at most ${MAX_GLOBSTARS} are allowed`;
  let total = globstars;
  for (const seg of segments) {
    if (seg === "**") continue;
    const stars = seg.match(/\*+/g)?.length ?? 0;
    if (stars > MAX_SEGMENT_STARS) {
      return `the segment "${seg.slice(0, 80)}" has ${stars} '*' wildcards; at most ${MAX_SEGMENT_STARS} per segment are allowed`;
    }
    total += stars;
  }
  if (total > MAX_WILDCARDS) return `the pattern has ${total} wildcards ('*' runs and '**' segments); at most ${MAX_WILDCARDS} are allowed`;
  return undefined;
}

/**
 * Whether `pattern` holds more than MAX_GLOB_LENGTH characters, counted as code points (what the matcher
 * reads as one character and API.md calls a character), not UTF-16 units: 1,024 characters outside the BMP
 * are 2,048 units of a JS string. Only a string of 1,025 to 2,048 units needs counting.
 */
function overLength(pattern: string): boolean {
  if (pattern.length <= MAX_GLOB_LENGTH) return false;
  if (pattern.length > 2 * MAX_GLOB_LENGTH) return true;
  let chars = 0;
  for (let i = 0; i < pattern.length; i++) {
    const unit = pattern.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < pattern.length) {
      const next = pattern.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    if (++chars > MAX_GLOB_LENGTH) return true;
  }
  return false;
}

/** Why `pattern` is not an acceptable path glob, or undefined when it is. */
export function globProblem(pattern: string): string | undefined {
  return checkGlob(pattern).problem;
}

/**
 * Checks `pattern` and, when it is acceptable, the size of its compiled automaton (states: what compiling
 * it cost and what a compiled scope holds), from one compilation: scope budgets count the states.
 */
export function checkGlob(pattern: string): { problem?: string; states: number } {
  const problem = staticGlobProblem(pattern);
  if (problem) return { problem, states: 0 };
  try {
    return { states: compileGlob(pattern).states };
  } catch (err) {
    if (err instanceof GlobSyntaxError) return { problem: `the pattern does not parse: ${err.message}`, states: 0 };
    throw err;
  }
}

function staticGlobProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return "the pattern is empty";
  if (overLength(pattern)) return `the pattern is longer than ${MAX_GLOB_LENGTH} characters`;
  if (pattern.startsWith("/")) return "the pattern is absolute; use a relative POSIX pattern";
  if (pattern.includes("\0")) return "the pattern contains a NUL character";
  if (pattern.split("/").some((seg) => seg === "..")) return "the pattern has a '..' segment";
  // Document paths have no empty segment, so such a pattern matches nothing: as an exclude it would
  // silently exclude nothing (`secret/` meant as a directory), so it is refused like any other typo.
  if (pattern.endsWith("/")) return "the pattern ends with '/' and can match no document path; use 'dir/**' for a directory";
  if (pattern.includes("//")) return "the pattern has an empty segment ('//') and can match no document path";
  return wildcardProblem(pattern);
}

/** Field violations for every bad glob in `patterns` (field named `field[i]`). */
export function globViolations(field: string, patterns: readonly string[]): FieldViolation[] {
  const out: FieldViolation[] = [];
  patterns.forEach((p, i) => {
    const why = globProblem(p);
    if (why) out.push({ field: `${field}[${i}]`, description: why });
  });
  return out;
}

/** Throws INVALID_ARGUMENT for any bad glob of the lists given. */
export function assertGlobs(lists: Record<string, readonly string[]>): void {
  const violations = Object.entries(lists).flatMap(([field, patterns]) => globViolations(field, patterns));
  if (violations.length > 0) throw new InvalidArgumentError(violations);
}

/**
 * A compiled include/exclude path filter: a path passes when the include list is empty or any include
 * glob matches, and no exclude glob matches. `**` is recursive; dotfiles match like any other file.
 */
export interface PathFilter {
  /** True when there are no globs at all (every path passes, and backends may skip the check). */
  readonly matchesAll: boolean;
  readonly includePaths: readonly string[];
  readonly excludePaths: readonly string[];
  /** The compiled automata's states, all globs together (what the filter holds in memory). */
  readonly states: number;
  matches(path: string): boolean;
}

/**
 * Compiles the filter once; the result is cheap to call on every candidate, and costs at most the path's
 * length times the automaton's size (no backtracking). The globs must have passed `globProblem`.
 */
export function compilePathFilter(includePaths: readonly string[], excludePaths: readonly string[]): PathFilter {
  const includes = includePaths.map((p) => compileGlob(p));
  const excludes = excludePaths.map((p) => compileGlob(p));
  return {
    matchesAll: includePaths.length === 0 && excludePaths.length === 0,
    includePaths,
    excludePaths,
    states: [...includes, ...excludes].reduce((sum, m) => sum + m.states, 0),
    matches(path: string): boolean {
      if (includes.length > 0 && !includes.some((m) => m.matches(path))) return false;
      return !excludes.some((m) => m.matches(path));
    },
  };
}
