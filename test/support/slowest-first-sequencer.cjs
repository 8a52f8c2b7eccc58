/**
 * Jest's order of test files, slowest first, so the long files never start last and leave one worker busy
 * while the other idles (on a 2-core machine that tail cost minutes). Jest orders by the durations in its own
 * cache, but that cache is keyed by the clone's path: CI runs on a fresh clone, where jest falls back to file
 * size, and the slowest files here are among the smallest (a five-line file that runs a shared suite against
 * three restarted servers). So a file's duration comes from, in turn: jest's cache; the durations of the last
 * run on this machine (written after every run to ~/.cache/acms-ci, outside any clone, and ignored when it
 * cannot be read or written); test-durations.json beside this file (seconds, from a CI log, per
 * "<project> <path>"; files under 5 s are not listed); a default for a file none of them knows.
 */
const { default: Sequencer } = require("@jest/test-sequencer");
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require("node:fs");
const { homedir } = require("node:os");
const { join, relative } = require("node:path");

/** A file no source knows is taken for a short one (most files take a few seconds). */
const UNKNOWN_MS = 2000;
const lastRunPath = join(process.env.ACMS_CI_CACHE || join(homedir(), ".cache", "acms-ci"), "jest-durations.json");

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return {};
  }
}

const seedMs = Object.fromEntries(Object.entries(require("./test-durations.json")).map(([k, s]) => [k, s * 1000]));

function keyOf(project, rootDir, path) {
  return `${project ?? ""} ${relative(rootDir, path)}`;
}

class SlowestFirstSequencer extends Sequencer {
  lastRun = readJson(lastRunPath);

  time(test) {
    const key = keyOf(test.context.config.displayName?.name, test.context.config.rootDir, test.path);
    return super.time(test) ?? this.lastRun[key] ?? seedMs[key] ?? UNKNOWN_MS;
  }

  cacheResults(tests, results) {
    super.cacheResults(tests, results);
    const rootDir = tests[0]?.context.config.rootDir;
    for (const r of results.testResults) {
      if (rootDir && !r.skipped && r.perfStats.runtime)
        this.lastRun[keyOf(r.displayName?.name, rootDir, r.testFilePath)] = r.perfStats.runtime;
    }
    try {
      mkdirSync(join(lastRunPath, ".."), { recursive: true });
      // Written beside and renamed: runs in several clones at once each leave a whole file (the last one's).
      writeFileSync(`${lastRunPath}.${process.pid}`, JSON.stringify(this.lastRun, null, 1));
      renameSync(`${lastRunPath}.${process.pid}`, lastRunPath);
    } catch {
      // Only the order of the next run depends on it.
    }
  }
}

module.exports = SlowestFirstSequencer;
