/**
 * Why a stored string may not hold U+0000: PostgreSQL text cannot keep it, so every engine refuses it alike
 * (a request's answer never depends on the engine behind it) and it is refused before any store is asked.
 */
export const NUL_PROBLEM = "contains a NUL character (U+0000), which no stored string may hold";

/** Whether `value` holds U+0000. */
export function hasNul(value: string): boolean {
  return value.includes("\u0000");
}
