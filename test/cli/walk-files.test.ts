import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeText, walkFiles } from "../../src/cli/walk-files.js";

let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "acms-walk-"));
  const write = (rel: string, content = "x\n") => {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), content);
  };
  write("README.md");
  write("docs/guide.md");
  write("docs/deep/er/notes.md");
  write("proto/a/v1/a.proto");
  write("src/main.ts");
  write(".gitignore", "*.tmp\nvendor/\n");
  write("scratch.tmp");
  write("vendor/lib.md");
  write("docs/.gitignore", "*.md\n!keep.md\n");
  write("docs/keep.md");
  write("docs/drop.md");
  write(".git/config");
  write("big.md", "y".repeat(2000));
  write("we#ird.md");
  symlinkSync(join(root, "README.md"), join(root, "link.md"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("several include globs each match at the root and below", async () => {
  const r = await walkFiles(root, { include: ["**/*.md", "proto/**/*.proto"], exclude: [], maxFileBytes: 1000 });
  expect(r.files.map((f) => f.path)).toEqual(["docs/keep.md", "proto/a/v1/a.proto", "README.md"].sort());
  expect(r.tooLarge.map((f) => f.path)).toEqual(["big.md"]);
  expect(r.badNames).toEqual(["we#ird.md"]);
  expect(r.symlinks).toBe(1);
});

test("nested .gitignore files apply to their subtree, deeper rules and negations win", async () => {
  const r = await walkFiles(root, { include: [], exclude: [], maxFileBytes: 1 << 20 });
  const paths = r.files.map((f) => f.path);
  expect(paths).toContain("docs/keep.md");
  expect(paths).toContain("src/main.ts");
  expect(paths).toContain(".gitignore");
  for (const gone of ["docs/guide.md", "docs/drop.md", "docs/deep/er/notes.md", "scratch.tmp", "vendor/lib.md", ".git/config"]) {
    expect(paths).not.toContain(gone);
  }
});

test("exclude globs drop files after the includes", async () => {
  const r = await walkFiles(root, { include: ["**/*"], exclude: ["src/**", "**/*.proto"], maxFileBytes: 1 << 20 });
  expect(r.files.map((f) => f.path).filter((p) => p.startsWith("src/") || p.endsWith(".proto"))).toEqual([]);
});

test("decodeText refuses NUL bytes and invalid UTF-8, keeps text", () => {
  expect(decodeText(Buffer.from("héllo\n"))).toBe("héllo\n");
  expect(decodeText(Buffer.from([0x68, 0x00, 0x69]))).toBeUndefined();
  expect(decodeText(Buffer.from([0xff, 0xfe, 0x41]))).toBeUndefined();
});
