import { CliUsageError } from "./cli-usage-error.js";

/** Parses an integer flag, naming the flag in the error. */
export function parseIntFlag(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?[0-9]+$/.test(raw.trim())) throw new CliUsageError(`${flag} must be an integer, got "${raw}"`);
  return Number(raw);
}

/** Parses a number flag, naming the flag in the error. */
export function parseNumberFlag(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n)) throw new CliUsageError(`${flag} must be a number, got "${raw}"`);
  return n;
}
