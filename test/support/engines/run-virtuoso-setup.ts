import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { VirtuosoInstance } from "./virtuoso.js";

// Jest loads global set-up files with Node's own resolver (no module mapper, so no `.js` to `.ts`): the
// extensionless path finds virtuoso.ts through the transform's require hook; the type comes from the usual path.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startVirtuoso } = require("./virtuoso") as typeof import("./virtuoso.js");

/** Where run-virtuoso-teardown.ts finds the instance this set-up starts (global set-up and teardown share globalThis). */
export const RUN_VIRTUOSO = Symbol.for("acms.test.runVirtuoso");

/**
 * Project global set-up (jest.config.cjs, project `postgres-replicas`): starts the one throwaway Virtuoso
 * of the run in the jest parent process, in the background, so tests of other projects run meanwhile (a
 * fresh Virtuoso takes 15-25 s to create its database here). Its graph is the one both replicas of every
 * test server see: the graph is never on PostgreSQL, and two servers need one graph store. Resource graphs
 * are named by ULID, so the servers of a run never share one. Workers read its environment from the file
 * named by ACMS_TEST_VIRTUOSO_STATE once it is there (run-virtuoso.ts); a failure to start is written
 * beside it and reported by every test that needs it.
 */
export default async function runVirtuosoSetup(): Promise<void> {
  const state = join(mkdtempSync(join(tmpdir(), "acms-run-virtuoso-")), "virtuoso.json");
  process.env.ACMS_TEST_VIRTUOSO_STATE = state;
  const starting: Promise<VirtuosoInstance | undefined> = startVirtuoso().then(
    (v) => {
      writeFileSync(`${state}.tmp`, JSON.stringify(v.env));
      renameSync(`${state}.tmp`, state);
      return v;
    },
    (err: Error) => {
      writeFileSync(`${state}.error`, String(err.stack ?? err));
      return undefined;
    },
  );
  (globalThis as Record<symbol, unknown>)[RUN_VIRTUOSO] = { starting, state };
}
