import { engineEnv } from "../test-server.js";
import { startVirtuoso, type VirtuosoInstance } from "./virtuoso.js";

/**
 * Runs the test servers of the calling test file with their graph on a throw-away Virtuoso: starts one
 * before the file's tests (installing it when missing) and stops and deletes it after. Call it at the top
 * of a test file, before any test module it `require`s registers its own hooks, so the engine is up
 * before their servers start.
 * @example const virtuoso = graphOnVirtuoso(); require("./sparql-isolation.test");
 */
export function graphOnVirtuoso(): { current(): VirtuosoInstance } {
  let instance: VirtuosoInstance | undefined;
  beforeAll(async () => {
    instance = await startVirtuoso();
    Object.assign(engineEnv, instance.env);
  }, 180_000);
  afterAll(async () => {
    for (const name of Object.keys(instance?.env ?? {})) delete engineEnv[name];
    await instance?.stop();
  });
  return {
    current() {
      if (!instance) throw new Error("Virtuoso is not running yet (call from a test or a hook)");
      return instance;
    },
  };
}
