import { InvalidArgumentError } from "./errors.js";

/** The longest alias accepted. */
export const MAX_ALIAS_LENGTH = 128;

const ALIAS = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** ULID shape in either case: an alias of this shape could be mistaken for an id when resolving names. */
const ULID_SHAPE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;

/** Why `alias` is not acceptable, or undefined when it is. */
export function aliasProblem(alias: string): string | undefined {
  if (alias.length === 0) return "the alias is empty";
  if (alias.length > MAX_ALIAS_LENGTH) return `the alias is longer than ${MAX_ALIAS_LENGTH} characters`;
  if (!ALIAS.test(alias)) return `"${alias.slice(0, 80)}" is not an alias: expected [A-Za-z0-9][A-Za-z0-9._-]*`;
  if (ULID_SHAPE.test(alias)) return `"${alias}" looks like a resource id (ULID); an alias must not, so names stay unambiguous`;
  return undefined;
}

/**
 * Throws INVALID_ARGUMENT naming `field` unless `alias` is a valid alias: `[A-Za-z0-9][A-Za-z0-9._-]*`, at
 * most 128 characters, and not shaped like a ULID (scope names are either ids or aliases, never both).
 * @example assertAlias("alias", "api-docs")
 */
export function assertAlias(field: string, alias: string): void {
  const why = aliasProblem(alias);
  if (why) throw InvalidArgumentError.field(field, why);
}
