import { InvalidArgumentError } from "./errors.js";

const PART = /^[a-z0-9][a-z0-9._-]*$/;

/** The longest project name accepted (both parts and the slash). */
export const MAX_PROJECT_NAME_LENGTH = 256;

/** Whether `name` is a valid `namespace/name` project name. */
export function isProjectName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_PROJECT_NAME_LENGTH) return false;
  const parts = name.split("/");
  return parts.length === 2 && PART.test(parts[0]) && PART.test(parts[1]);
}

/**
 * What is wrong with `value` as a project name, or undefined when it is one: the one wording every check
 * of a project field uses.
 */
export function projectNameProblem(value: string): string | undefined {
  return isProjectName(value) ? undefined : `"${value.slice(0, 80)}" is not a project name (namespace/name)`;
}

/**
 * Throws INVALID_ARGUMENT naming `field` unless `name` is a valid project name (with the pattern spelled
 * out, for the fields that create one).
 * @example assertProjectName("projects[0]", "local/api")
 */
export function assertProjectName(field: string, name: string): void {
  if (!isProjectName(name)) {
    throw InvalidArgumentError.field(
      field,
      `"${name.slice(0, 80)}" is not a project name: expected namespace/name, each part [a-z0-9][a-z0-9._-]*`,
    );
  }
}
