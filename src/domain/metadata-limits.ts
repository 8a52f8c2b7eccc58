import type { FieldViolation } from "./errors.js";
import { hasNul, NUL_PROBLEM } from "./nul-character.js";

/**
 * The one set of limits on string metadata, wherever it is stored (resources, documents, fragments), so
 * one request cannot bloat a listing, an index row or a fragment.
 */
export const METADATA_LIMITS = { maxEntries: 64, maxKeyLength: 256, maxValueLength: 4096 } as const;

/**
 * Every violation of the limits in `metadata` at once: too many entries names `field`; an empty or too
 * long key, a too long value, or a NUL character in either, names `field[key]` (the key cut to 64 characters).
 * @example metadataViolations("documents[0].metadata", { lang: "en" }) // []
 */
export function metadataViolations(field: string, metadata: Readonly<Record<string, string>>): FieldViolation[] {
  const out: FieldViolation[] = [];
  const entries = Object.entries(metadata);
  if (entries.length > METADATA_LIMITS.maxEntries) {
    out.push({ field, description: `more than ${METADATA_LIMITS.maxEntries} entries (got ${entries.length})` });
    return out;
  }
  for (const [k, v] of entries) {
    const at = `${field}[${k.slice(0, 64)}]`;
    if (k.length === 0) out.push({ field: at, description: "the key is empty" });
    else if (k.length > METADATA_LIMITS.maxKeyLength)
      out.push({ field: at, description: `the key is longer than ${METADATA_LIMITS.maxKeyLength} characters` });
    if (hasNul(k)) out.push({ field: at, description: `the key ${NUL_PROBLEM}` });
    if (v.length > METADATA_LIMITS.maxValueLength)
      out.push({ field: at, description: `the value is longer than ${METADATA_LIMITS.maxValueLength} characters` });
    else if (hasNul(v)) out.push({ field: at, description: `the value ${NUL_PROBLEM}` });
  }
  return out;
}
