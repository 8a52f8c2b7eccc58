import { rmSync } from "node:fs";
import { dirname } from "node:path";
import type { VirtuosoInstance } from "./virtuoso.js";

/**
 * Project global teardown (jest.config.cjs, project `postgres-replicas`): stops the run's Virtuoso that
 * run-virtuoso-setup.ts started (waiting for its start to end first) and removes its state directory.
 */
export default async function runVirtuosoTeardown(): Promise<void> {
  const held = (globalThis as Record<symbol, unknown>)[Symbol.for("acms.test.runVirtuoso")] as
    { starting: Promise<VirtuosoInstance | undefined>; state: string } | undefined;
  if (!held) return;
  const instance = await held.starting;
  await instance?.stop();
  rmSync(dirname(held.state), { recursive: true, force: true });
}
