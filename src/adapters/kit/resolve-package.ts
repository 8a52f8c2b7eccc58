import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/**
 * The file a worker thread should `require` for package `name`: resolved from the entry script (bin/acms.js,
 * a test runner) and then the working directory, since a worker started from function text has no module
 * path of its own. `purpose` names the worker in the error when neither finds it.
 * @example new Worker(source, { eval: true, workerData: { ortPath: resolvePackage("onnxruntime-node", "the embedding worker") } });
 */
export function resolvePackage(name: string, purpose: string): string {
  const bases: string[] = [];
  if (process.argv[1]) {
    try {
      bases.push(realpathSync(process.argv[1]));
    } catch {
      // The entry script may be virtual (e.g. `node -e`): fall back to the working directory.
    }
  }
  bases.push(join(process.cwd(), "index.js"));
  for (const base of bases) {
    try {
      return createRequire(base).resolve(name);
    } catch {
      // Not resolvable from this base; try the next one.
    }
  }
  throw new Error(`cannot resolve the package "${name}" for ${purpose}`);
}
