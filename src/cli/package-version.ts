import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The version in the `acms` package.json above `moduleUrl`: the same answer from `src/cli/` (tsx) and from
 * `dist/src/cli/` (compiled), which sit at different depths. Undefined when no such package.json is found.
 */
export function packageVersion(moduleUrl: string): string | undefined {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "acms" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // No package.json here (or not ours): look one level up.
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}
