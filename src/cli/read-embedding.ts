import { readFileSync } from "node:fs";
import { CliUsageError } from "./cli-usage-error.js";

/**
 * An embedding given on the command line: a JSON array of numbers, or `@file` holding one. The CLI does not
 * embed text itself; the vector comes from the caller's model.
 */
export function readEmbedding(raw: string): number[] {
  let text = raw;
  if (raw.startsWith("@")) {
    try {
      text = readFileSync(raw.slice(1), "utf8");
    } catch (err) {
      throw new CliUsageError(`--embedding: cannot read ${raw.slice(1)}: ${(err as Error).message}`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliUsageError("--embedding must be a JSON array of numbers, or @file holding one");
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((x) => typeof x === "number" && Number.isFinite(x))) {
    throw new CliUsageError("--embedding must be a non-empty JSON array of finite numbers");
  }
  return value as number[];
}
