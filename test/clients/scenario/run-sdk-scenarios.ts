import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { createAcmsClient } from "../../../src/index.js";
import { runScenario, formatResult, type Scenario } from "../../../clients/scenario/typescript/run-scenario.js";
import { installPythonClient } from "../python-package/install-python-client.js";

const ROOT = join(__dirname, "..", "..", "..");
export const SCENARIO_DIR = join(ROOT, "clients/scenario");

/** clients/scenario/scenario.json. */
export const scenario: Scenario = JSON.parse(readFileSync(join(SCENARIO_DIR, "scenario.json"), "utf8")) as Scenario;

/** The SDKs that run the scenario. */
export type Sdk = "typescript" | "go" | "python";
export const SDKS: Sdk[] = ["typescript", "go", "python"];

/** Where, as whom and in which trace a runner runs. */
export interface ScenarioRun {
  url: string;
  apiKey: string;
  project: string;
  traceparent?: string;
}

function exec(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (_err, stdout, stderr) => resolve(`${stdout}\n${stderr}`));
  });
}

/**
 * Runs the scenario with one SDK's runner (TypeScript in process; `go test` in clients/scenario/go; pytest with
 * the acms-client wheel installed in a venv) and returns the lines it printed, `ok N name` or `FAIL N name: why`.
 */
export async function runSdkScenario(sdk: Sdk, run: ScenarioRun): Promise<string[]> {
  const env = {
    ...process.env,
    ACMS_URL: run.url,
    ACMS_API_KEY: run.apiKey,
    ACMS_PROJECT: run.project,
    ACMS_TRACEPARENT: run.traceparent ?? "",
  };
  let out: string;
  if (sdk === "typescript") {
    const results = await runScenario(scenario, {
      baseUrl: run.url,
      apiKey: run.apiKey,
      project: run.project,
      traceparent: run.traceparent,
    });
    return results.map(formatResult);
  } else if (sdk === "go") {
    out = await exec("go", ["test", "-count=1", "-v", "-run", "^TestScenario$", "./..."], join(SCENARIO_DIR, "go"), env);
  } else {
    const { python } = await installPythonClient();
    out = await exec(
      python,
      ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-s", join(SCENARIO_DIR, "python", "test_scenario.py")],
      join(SCENARIO_DIR, "python"),
      {
        ...env,
        PYTHONDONTWRITEBYTECODE: "1",
      },
    );
  }
  const lines = out.split("\n").filter((l) => /^(ok|FAIL) \d+ /.test(l));
  if (lines.length === 0) throw new Error(`the ${sdk} runner printed no step:\n${out}`);
  return lines;
}

/**
 * What every runner must print: every step ok, or, while the server does not implement the erasure RPCs
 * (issue 28: DeleteFragment, DeleteResource), every step before the first `erasure` step ok and that step
 * refused with UNIMPLEMENTED (the runners stop at the first failed step).
 */
export function expectedLines(erasureImplemented: boolean): (string | RegExp)[] {
  const lines: (string | RegExp)[] = [];
  for (const [i, step] of scenario.steps.entries()) {
    if (!erasureImplemented && step.tags?.includes("erasure")) {
      lines.push(new RegExp(`^FAIL ${i + 1} ${step.name}: UNIMPLEMENTED`));
      break;
    }
    lines.push(`ok ${i + 1} ${step.name}`);
  }
  return lines;
}

/** `lines` against `expectedLines` (jest-friendly: one readable diff). */
export function matches(lines: string[], expected: (string | RegExp)[]): boolean {
  return lines.length === expected.length && expected.every((e, i) => (typeof e === "string" ? lines[i] === e : e.test(lines[i])));
}

/**
 * Whether the server at `url` implements the erasure RPCs (issue 28's DeleteFragment): until it does, the
 * scenario's last steps answer UNIMPLEMENTED. `apiKey` may write `local/*`.
 */
export async function erasureImplemented(url: string, apiKey: string): Promise<boolean> {
  const acms = createAcmsClient({ baseUrl: url, apiKey });
  try {
    const probe = `local/scenario-probe-${randomBytes(4).toString("hex")}`;
    await acms.registry.createProject({ name: probe });
    const { scope } = await acms.scope.resolveScope({ projects: [probe] });
    await acms.withScope(scope!.scopeId).tiers.deleteFragment({ fragmentId: "01ARZ3NDEKTSV4RRFFQ69G5FAV" });
    return true;
  } catch (err) {
    return !(err instanceof ConnectError && err.code === Code.Unimplemented);
  } finally {
    acms.close();
  }
}
