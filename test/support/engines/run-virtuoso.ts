import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * The environment that puts a server's graph on the run's one Virtuoso (ACMS_SPARQL_*), waiting for it to
 * be up: the jest project's global set-up starts it (run-virtuoso-setup.ts) and names its state file in
 * ACMS_TEST_VIRTUOSO_STATE.
 */
export async function runVirtuosoEnv(): Promise<Record<string, string>> {
  const state = process.env.ACMS_TEST_VIRTUOSO_STATE;
  if (!state)
    throw new Error("no run Virtuoso: ACMS_TEST_VIRTUOSO_STATE is unset (the jest project's globalSetup must be run-virtuoso-setup.ts)");
  for (;;) {
    if (existsSync(state)) return JSON.parse(readFileSync(state, "utf8")) as Record<string, string>;
    if (existsSync(`${state}.error`)) throw new Error(`the run's Virtuoso did not start: ${readFileSync(`${state}.error`, "utf8")}`);
    await sleep(100);
  }
}
