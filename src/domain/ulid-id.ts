import { getRandomValues } from "node:crypto";
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

/**
 * ulid's own source of randomness asks the platform's CSPRNG for one byte per character (16 calls a ULID,
 * ~60 us, a twentieth of a RegisterResource's server time); this one hands out the same bytes (each over
 * 256, as ulid's does) from a pool the CSPRNG fills 4 KiB at a time.
 */
const pool = new Uint8Array(4096);
let drawn = pool.length;
function pooledRandom(): number {
  if (drawn === pool.length) {
    getRandomValues(pool);
    drawn = 0;
  }
  return pool[drawn++] / 256;
}

const factory = monotonicFactory(pooledRandom);

/** A new ULID, monotonic within this process. */
export function newUlid(now: number = Date.now()): string {
  return factory(now);
}
