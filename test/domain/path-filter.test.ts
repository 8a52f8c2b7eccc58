import { InvalidArgumentError } from "../../src/domain/errors.js";
import { assertGlobs, compilePathFilter, globProblem } from "../../src/domain/path-filter.js";

describe("path globs", () => {
  it.each([
    ["", "empty"],
    ["/etc/*", "absolute"],
    ["docs/../secret/**", "'..'"],
    ["a".repeat(1025), "longer than 1024"],
  ])("rejects %j", (pattern, why) => {
    expect(globProblem(pattern)).toContain(why);
  });

  it("counts the 1,024-character limit in characters (code points), as the matcher reads them, not UTF-16 units", () => {
    // U+1D51E is one character, two UTF-16 code units: 1,024 of them are 2,048 units of a JS string.
    const astral = "\u{1D51E}";
    expect(globProblem(astral.repeat(1024))).toBeUndefined();
    expect(globProblem(`${"é".repeat(512)}/${astral.repeat(511)}`)).toBeUndefined();
    expect(globProblem(astral.repeat(1025))).toContain("longer than 1024");
    expect(globProblem("a".repeat(1_000_000))).toContain("longer than 1024");
    expect(compilePathFilter([astral.repeat(1024)], []).matches(astral.repeat(1024))).toBe(true);
  });

  it("accepts relative patterns, ** included", () => {
    for (const p of ["**/*.md", "docs/**", "src/*.ts", "a/{b,c}/*.txt", ".github/**"]) expect(globProblem(p)).toBeUndefined();
  });

  it("names every bad field at once", () => {
    let caught: InvalidArgumentError | undefined;
    try {
      assertGlobs({ include_paths: ["ok/**", ""], exclude_paths: ["/abs"] });
    } catch (err) {
      caught = err as InvalidArgumentError;
    }
    expect(caught?.violations.map((v) => v.field)).toEqual(["include_paths[1]", "exclude_paths[0]"]);
  });

  it("includes when the include list is empty or any glob matches, and no exclude matches", () => {
    const all = compilePathFilter([], []);
    expect(all.matchesAll).toBe(true);
    expect(all.matches("anything/at/all.bin")).toBe(true);

    const f = compilePathFilter(["docs/**", "*.md"], ["docs/private/**", "**/*.secret"]);
    expect(f.matchesAll).toBe(false);
    expect(f.matches("docs/a/b/c.txt")).toBe(true);
    expect(f.matches("README.md")).toBe(true);
    expect(f.matches("src/a.ts")).toBe(false);
    expect(f.matches("docs/private/x.md")).toBe(false);
    expect(f.matches("docs/keys.secret")).toBe(false);
    expect(f.matches("docs/.hidden/notes.txt")).toBe(true);
  });

  it("`**` is recursive at any depth, `*` stays within one segment", () => {
    const f = compilePathFilter(["src/*.ts"], []);
    expect(f.matches("src/a.ts")).toBe(true);
    expect(f.matches("src/sub/a.ts")).toBe(false);
    expect(compilePathFilter(["src/**/*.ts"], []).matches("src/x/y/z/a.ts")).toBe(true);
  });
});
