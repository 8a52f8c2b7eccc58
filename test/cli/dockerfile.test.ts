import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

/** The string array `const NAME = [...]` of scripts/build.mjs: the folders the build reads. */
function buildList(name: string): string[] {
  const m = new RegExp(`const ${name} = \\[([^\\]]*)\\]`).exec(read("scripts/build.mjs"));
  if (!m) throw new Error(`scripts/build.mjs has no ${name}`);
  return [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]);
}

/** The stages of the Dockerfile, by name (the last, unnamed one as "runtime"), each with its COPY sources. */
function stages(): Map<string, { from: string; copies: Array<{ from?: string; src: string[] }> }> {
  const out = new Map<string, { from: string; copies: Array<{ from?: string; src: string[] }> }>();
  let current: { from: string; copies: Array<{ from?: string; src: string[] }> } | undefined;
  for (const line of read("Dockerfile").split("\n")) {
    const from = /^FROM (\S+)(?: AS (\S+))?/.exec(line);
    if (from) {
      current = { from: from[1], copies: [] };
      out.set(from[2] ?? "runtime", current);
      continue;
    }
    const copy = /^COPY (?:--from=(\S+) )?(.+) (\S+)$/.exec(line);
    if (copy && current) current.copies.push({ from: copy[1], src: copy[2].split(/\s+/) });
  }
  return out;
}

/**
 * No Docker daemon runs here, so the image is never built in CI: this keeps the Dockerfile in step with
 * the build it wraps (a source folder added to scripts/build.mjs and not copied fails the image's build).
 */
describe("Dockerfile", () => {
  const s = stages();
  const ignored = read(".dockerignore")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  /** Whether .dockerignore keeps `path` out of the build context (a later `!path` re-includes it). */
  const excluded = (path: string) => {
    let out = false;
    for (const rule of ignored) {
      const negated = rule.startsWith("!");
      const p = negated ? rule.slice(1) : rule;
      if (path === p || path.startsWith(`${p}/`)) out = !negated;
    }
    return out;
  };

  it("copies into the build stage every folder scripts/build.mjs reads, the console's included, and none is ignored", () => {
    const build = s.get("build")!;
    expect(build).toBeDefined();
    const copied = build.copies.filter((c) => c.from === undefined).flatMap((c) => c.src);
    const needed = [...new Set(["scripts", ...buildList("SOURCES"), ...buildList("CONSOLE_SOURCES")])];
    expect(needed).toEqual(expect.arrayContaining(["src", "gen", "console", "clients/typescript/src"]));
    for (const dir of needed) {
      expect({ dir, copied: copied.includes(dir) }).toEqual({ dir, copied: true });
      expect({ dir, excluded: excluded(dir) }).toEqual({ dir, excluded: false });
    }
  });

  it("ships the compiled runtime only: dist from the build stage, bin, the package files and the OpenAPI document GET /openapi.json serves, no sources", () => {
    const runtime = s.get("runtime")!;
    const fromBuild = runtime.copies.filter((c) => c.from === "build").flatMap((c) => c.src);
    expect(fromBuild).toEqual(["/app/dist"]);
    const own = runtime.copies.filter((c) => c.from === undefined).flatMap((c) => c.src);
    expect(own.sort()).toEqual(["bin", "openapi/acms.openapi.json", "package-lock.json", "package.json"]);
    // bin/acms.js rebuilds only where scripts/build.mjs exists: the image has none, so it runs dist/ as is.
    expect(read("bin/acms.js")).toContain('"../scripts/build.mjs"');
    expect(read("Dockerfile")).toMatch(/^ENTRYPOINT \["node", "bin\/acms\.js"\]$/m);
  });

  it("builds the FTS5 extension in the deps stage (the postinstall of npm ci) and ships it", () => {
    const deps = s.get("deps")!;
    const copied = deps.copies.flatMap((c) => c.src);
    expect(copied).toEqual(expect.arrayContaining(["scripts/build-native.mjs", "native/acms-fts5"]));
    expect(excluded("native/acms-fts5")).toBe(false);
    const lines = read("Dockerfile").split("\n");
    const npmCi = lines.findIndex((l) => /npm ci --omit=dev/.test(l));
    expect(lines.findIndex((l) => l.startsWith("COPY native/acms-fts5"))).toBeLessThan(npmCi);
    expect(JSON.parse(read("package.json")).scripts.postinstall).toBe("node scripts/build-native.mjs");
    const runtime = s.get("runtime")!;
    expect(runtime.copies.filter((c) => c.from === "deps").flatMap((c) => c.src)).toEqual(expect.arrayContaining(["/app/native/build"]));
  });
});
