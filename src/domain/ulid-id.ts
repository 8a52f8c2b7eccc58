import { monotonicFactory } from "ulid";

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Whether `value` is a canonical (upper-case Crockford base32) ULID. */
export function isUlid(value: string): boolean {
  return ULID.test(value);
}

/**
 * What is wrong with `value` as a resource id, or undefined when it is one: the one wording every check of
 * a resource id field uses.
 */
export function resourceIdProblem(value: string): string | undefined {
  return isUlid(value) ? undefined : `"${value.slice(0, 80)}" is not a resource id (ULID)`;
}

const factory = monotonicFactory();

/** A new ULID, monotonic within this process. */
export function newUlid(now: number = Date.now()): string {
  return factory(now);
}
