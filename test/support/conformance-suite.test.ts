import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isCi } from "./conformance-suite.js";

interface JestJson {
  success: boolean;
  testResults: Array<{ assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }> }>;
}

const ROOT = join(__dirname, "..", "..");

/** Runs the fixture suites in a child jest, with or without CI set, and answers its JSON report and output. */
function runFixture(ci: boolean): { report: JestJson; output: string; status: number | null } {
  const dir = mkdtempSync(join(tmpdir(), "acms-conformance-"));
  try {
    const out = join(dir, "report.json");
    const env: NodeJS.ProcessEnv = { ...process.env, CI: ci ? "true" : "" };
    const r = spawnSync(
      process.execPath,
      [
        require.resolve("jest/bin/jest"),
        "--ci",
        "--testMatch",
        "**/test/support/fixtures/conformance-outcomes.fixture.ts",
        "--json",
        `--outputFile=${out}`,
      ],
      { cwd: ROOT, env, encoding: "utf8", timeout: 120_000 },
    );
    return { report: JSON.parse(readFileSync(out, "utf8")) as JestJson, output: `${r.stdout}${r.stderr}`, status: r.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function statuses(report: JestJson): Record<string, string> {
  return Object.fromEntries(report.testResults.flatMap((f) => f.assertionResults.map((a) => [a.fullName, a.status])));
}

describe("the conformance suite convention", () => {
  test("under CI an unavailable engine fails the run, naming the engine; locally it warns and lists what did not run", () => {
    const ci = runFixture(true);
    expect(ci.status).not.toBe(0);
    expect(statuses(ci.report)).toMatchObject({
      "FakePort conformance: engine missing FakeDB 9 is available": "failed",
      "FakePort conformance: engine missing not run: FakeDB 9 unavailable a test that needs the engine [skipped: FakeDB 9 unavailable]":
        "pending",
    });
    const local = runFixture(false);
    expect(local.output).toContain("ENGINE UNAVAILABLE: FakeDB 9 (fakedb is not installed): the FakePort suite did not run");
    expect(statuses(local.report)).toMatchObject({
      "FakePort conformance: engine missing ENGINE UNAVAILABLE: FakeDB 9 (fakedb is not installed): the FakePort suite did not run":
        "pending",
      "FakePort conformance: engine missing not run: FakeDB 9 unavailable a test that needs the engine [skipped: FakeDB 9 unavailable]":
        "pending",
    });
    // Whatever CI says, a stale skip and a suite that skips every test fail, and a skip shows its reason.
    for (const run of [ci, local]) {
      expect(statuses(run.report)).toMatchObject({
        "FakePort conformance: stale skip a test that runs": "passed",
        "FakePort conformance: stale skip every skip names a test of the suite": "failed",
        "FakePort conformance: everything skipped the only test [skipped: not for this adapter]": "pending",
        "FakePort conformance: everything skipped at least one test of the suite runs": "failed",
      });
    }
  });

  test("CI is on for any value but empty, 0 and false", () => {
    expect(isCi({ CI: "true" })).toBe(true);
    expect(isCi({ CI: "1" })).toBe(true);
    expect(isCi({})).toBe(false);
    expect(isCi({ CI: "" })).toBe(false);
    expect(isCi({ CI: "0" })).toBe(false);
    expect(isCi({ CI: "FALSE" })).toBe(false);
  });
});
