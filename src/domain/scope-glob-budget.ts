import type { FieldViolation } from "./errors.js";
import { checkGlob } from "./path-filter.js";

/**
 * What the path globs of one scope may cost in all, over its whole chain (a narrowed scope holds its
 * parent's globs and adds its own): at most `maxGlobs` globs, include and exclude together, compiling to at
 * most `maxStates` automaton states. Without it a read-only key killed the server: 94 chained NarrowScope
 * calls of 256 globs each, every scope of the chain compiled and cached. The states bound both the time of
 * one compilation (about 1,700 states per ms, so a full budget is tens of ms on the serving thread) and the
 * memory of a compiled scope (see BYTES_PER_GLOB_STATE).
 */
export const SCOPE_GLOB_BUDGET = { maxGlobs: 512, maxStates: 40_000 } as const;

/** What one compiled automaton state holds in memory, measured on V8 (300 to 600 bytes): the upper end. */
export const BYTES_PER_GLOB_STATE = 600;

/** One list of globs a scope will hold: its wire field, and whether its entries were already in the parent. */
export interface ScopeGlobList {
  field: string;
  patterns: readonly string[];
  /** True for the parent's globs a narrowed scope keeps: not re-validated, only counted, and never blamed. */
  inherited?: boolean;
}

/**
 * Validates every new glob and checks the scope's total against SCOPE_GLOB_BUDGET, compiling each glob once
 * and stopping at the first one past the budget (so a refused request costs at most the budget and one glob).
 * Violations name the wire field (`exclude_paths[3]` for a bad glob, `exclude_paths` for the budget).
 */
export function scopeGlobViolations(lists: readonly ScopeGlobList[]): FieldViolation[] {
  // A glob a list repeats (or a narrowing repeats from its parent) is stored once, so it counts once.
  const held = new Set<string>();
  for (const list of lists) for (const p of list.patterns) held.add(`${list.field}\0${p}`);
  const blamed = [...lists].reverse().find((l) => !l.inherited && l.patterns.length > 0);
  if (held.size > SCOPE_GLOB_BUDGET.maxGlobs && blamed) {
    return [
      {
        field: blamed.field,
        description: `the scope would hold ${held.size} path globs (with its parent's); at most ${SCOPE_GLOB_BUDGET.maxGlobs} are allowed per scope`,
      },
    ];
  }
  const violations: FieldViolation[] = [];
  const checked = new Map<string, string | undefined>();
  let states = 0;
  for (const list of lists) {
    for (let i = 0; i < list.patterns.length; i++) {
      const key = `${list.field}\0${list.patterns[i]}`;
      let problem = checked.get(key);
      if (!checked.has(key)) {
        const check = checkGlob(list.patterns[i]);
        problem = check.problem;
        checked.set(key, problem);
        states += check.states;
      }
      if (problem && !list.inherited) violations.push({ field: `${list.field}[${i}]`, description: problem });
      if (states > SCOPE_GLOB_BUDGET.maxStates) {
        return [
          ...violations,
          {
            field: list.inherited ? (blamed?.field ?? list.field) : list.field,
            description:
              `the scope's path globs compile to more than ${SCOPE_GLOB_BUDGET.maxStates} automaton states (with its parent's): ` +
              "use fewer or simpler globs (ranges and alternatives cost the most)",
          },
        ];
      }
    }
  }
  return violations;
}
