import { monotonicFactory } from "ulid";

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Whether `value` is a canonical (upper-case Crockford base32) ULID. */
export function isUlid(value: string): boolean {
  return ULID.test(value);
}

const factory = monotonicFactory();

/** A new ULID, monotonic within this process. */
export function newUlid(now: number = Date.now()): string {
  return factory(now);
}
