import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import micromatch from "micromatch";

/** A file found by the walk, with its path relative to the root in POSIX form (the document path). */
export interface WalkedFile {
  path: string;
  absolutePath: string;
  size: number;
}

/** What the walk found and what it left out, with counts so the user sees nothing vanished silently. */
export interface WalkResult {
  files: WalkedFile[];
  /** Files over the size limit (never read). */
  tooLarge: WalkedFile[];
  /** Files whose name cannot be a document path (`#`, `\`, over 1,024 characters). */
  badNames: string[];
  /** Symbolic links, which are not followed (they may leave the folder or loop). */
  symlinks: number;
  /** Entries that could not be read (permissions, races with deletion). */
  unreadable: string[];
}

/** Options of {@link walkFiles}. */
export interface WalkOptions {
  /** Keep only files matching one of these globs (relative to the root); empty keeps all. */
  include: string[];
  /** Drop files matching any of these globs. */
  exclude: string[];
  /** Files larger than this are counted in `tooLarge` and not returned. */
  maxFileBytes: number;
}

/** Directories never walked: version-control internals and the server's default data directory. */
const ALWAYS_SKIPPED = new Set([".git", ".hg", ".svn", ".acms"]);

interface IgnoreLevel {
  /** The directory of the .gitignore, relative to the root ("" for the root), with a trailing slash. */
  base: string;
  rules: Ignore;
}

function isIgnored(levels: IgnoreLevel[], rel: string): boolean {
  let ignored = false;
  for (const level of levels) {
    if (!rel.startsWith(level.base)) continue;
    const r = level.rules.test(rel.slice(level.base.length));
    if (r.ignored) ignored = true;
    else if (r.unignored) ignored = false;
  }
  return ignored;
}

/** One matcher per glob (a brace union of globstar patterns stops matching files at the root), or undefined for none. */
function anyOf(globs: string[]): ((path: string) => boolean) | undefined {
  if (globs.length === 0) return undefined;
  const matchers = globs.map((g) => micromatch.matcher(g, { dot: true }));
  return (path) => matchers.some((m) => m(path));
}

function badName(rel: string): boolean {
  return rel.length > 1024 || rel.includes("#") || rel.includes("\\") || rel.includes("\0");
}

/**
 * Walks `root` the way git sees it: every `.gitignore` on the way applies to its own subtree (deeper files
 * win, `!` re-includes), `.git` is skipped, symlinks are not followed, and the include/exclude globs and the
 * size limit are applied. Paths come back sorted, so runs are reproducible.
 */
export async function walkFiles(root: string, opts: WalkOptions): Promise<WalkResult> {
  const result: WalkResult = { files: [], tooLarge: [], badNames: [], symlinks: 0, unreadable: [] };
  const include = anyOf(opts.include);
  const exclude = anyOf(opts.exclude);

  async function visit(dirAbs: string, dirRel: string, levels: IgnoreLevel[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(dirAbs, { withFileTypes: true });
    } catch {
      result.unreadable.push(dirRel || ".");
      return;
    }
    let here = levels;
    if (entries.some((e) => e.name === ".gitignore" && e.isFile())) {
      try {
        const text = await readFile(join(dirAbs, ".gitignore"), "utf8");
        here = [...levels, { base: dirRel, rules: ignore({ allowRelativePaths: true }).add(text) }];
      } catch {
        result.unreadable.push(`${dirRel}.gitignore`);
      }
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = `${dirRel}${entry.name}`;
      const abs = join(dirAbs, entry.name);
      if (entry.isSymbolicLink()) {
        if (!isIgnored(here, rel)) result.symlinks++;
        continue;
      }
      if (entry.isDirectory()) {
        if (ALWAYS_SKIPPED.has(entry.name) || isIgnored(here, `${rel}/`)) continue;
        await visit(abs, `${rel}/`, here);
        continue;
      }
      if (!entry.isFile() || isIgnored(here, rel)) continue;
      if (include && !include(rel)) continue;
      if (exclude && exclude(rel)) continue;
      if (badName(rel)) {
        result.badNames.push(rel);
        continue;
      }
      let size: number;
      try {
        size = (await stat(abs)).size;
      } catch {
        result.unreadable.push(rel);
        continue;
      }
      const file = { path: rel, absolutePath: abs, size };
      if (size > opts.maxFileBytes) result.tooLarge.push(file);
      else result.files.push(file);
    }
  }

  await visit(root, "", []);
  return result;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The text of a file, or undefined when it is binary: it holds a NUL byte or is not valid UTF-8
 * (what a search index cannot use).
 */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}
