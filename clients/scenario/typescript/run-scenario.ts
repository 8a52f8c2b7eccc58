// In a project that installed the package these two imports are "@acms/client" and
// "@acms/client/gen/acms/v1/tiers_pb" (test/sdk-outside-repo/scenario-outside-repo.test.ts runs this file so).
import {
  Code,
  ConnectError,
  createAcmsClient,
  findScopeViolation,
  type AcmsClient,
  type AcmsProtocol,
} from "../../typescript/src/index.js";
import { Tier } from "../../../gen/acms/v1/tiers_pb.js";

// The TypeScript runner of clients/scenario/scenario.json (the rules are in clients/scenario/README.md; the Go
// and Python runners follow the same ones). Each step's call is made with @acms/client, its answer reduced
// to a plain observation, and matched against the step's expectations.

/** One step of scenario.json. */
export interface ScenarioStep {
  name: string;
  call: string;
  args: Record<string, unknown>;
  tags?: string[];
  save?: Record<string, string>;
  expect?: unknown;
  expectError?: { code: string; scopeViolation?: Record<string, unknown> };
}

/** scenario.json. */
export interface Scenario {
  name: string;
  embeddingDim: number;
  variables: Record<string, string>;
  steps: ScenarioStep[];
}

/** How a step went: `ok`, or the first difference found. */
export interface StepResult {
  index: number;
  name: string;
  ok: boolean;
  reason?: string;
}

/** Where and as whom the scenario runs. */
export interface RunOptions {
  baseUrl: string;
  apiKey: string;
  /** The {project} of this run: a fresh name its key may write. */
  project: string;
  /** A W3C traceparent sent on every call (the server's spans continue this trace). */
  traceparent?: string;
  protocol?: AcmsProtocol;
}

type Observation = Record<string, unknown>;

/** `value` with every `{name}` in its strings replaced by `vars[name]`. */
function substitute(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === "string")
    return value.replace(/\{(\w+)\}/g, (whole, name: string) => {
      if (!(name in vars)) throw new Error(`unknown variable ${whole}`);
      return vars[name];
    });
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}

/** The first place `actual` differs from `expected` (objects: the keys given; lists: same length, in order), or undefined. */
export function difference(expected: unknown, actual: unknown, at = "answer"): string | undefined {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const d = difference(expected[i], actual[i], `${at}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual))
      return `${at}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [k, v] of Object.entries(expected)) {
      const d = difference(v, (actual as Record<string, unknown>)[k], `${at}.${k}`);
      if (d) return d;
    }
    return undefined;
  }
  return expected === actual ? undefined : `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** A gRPC code's canonical name (PERMISSION_DENIED), as scenario.json writes it. */
function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

async function call(
  acms: AcmsClient,
  step: ScenarioStep,
  args: Record<string, any>,
  headers: Record<string, string>,
): Promise<Observation> {
  const opts = { headers };
  switch (step.call) {
    case "createProject": {
      const { project } = await acms.registry.createProject({ name: args.name }, opts);
      return { name: project?.name };
    }
    case "registerResource": {
      const { resource } = await acms.registry.registerResource({ project: args.project, alias: args.alias, kind: args.kind }, opts);
      return { id: resource?.id, alias: resource?.alias, ownerProject: resource?.ownerProject };
    }
    case "upsertDocuments": {
      const documents = (args.documents as { path: string; content: string; embedding: number[] }[]).map((d) => ({
        path: d.path,
        content: d.content,
        chunks: [{ text: d.content, embedding: d.embedding }],
      }));
      const res = await acms.index.upsertDocuments(
        (async function* () {
          yield { resourceId: args.resourceId, documents };
        })(),
        opts,
      );
      return { documentsUpserted: res.documentsUpserted, chunksIndexed: res.chunksIndexed, vectorsIndexed: res.vectorsIndexed };
    }
    case "resolveScope": {
      const { scope } = await acms.scope.resolveScope({ projects: args.projects }, opts);
      return { scopeId: scope?.scopeId, projectNames: scope?.projectNames, resourceIds: scope?.resourceIds };
    }
    case "search": {
      const res = await acms.text.search({ query: args.query, maxResults: args.maxResults }, opts);
      return { paths: res.results.map((r) => r.path), scopeId: res.scopeId };
    }
    case "similaritySearch": {
      const res = await acms.vector.similaritySearch({ embedding: args.embedding, topK: args.topK }, opts);
      return { paths: res.results.map((r) => r.path), scopeId: res.scopeId };
    }
    case "hybridSearch": {
      const res = await acms.rag.hybridSearch({ query: args.query, embedding: args.embedding, topK: args.topK }, opts);
      return { paths: res.results.map((r) => r.path), scopeId: res.scopeId };
    }
    case "searchStream": {
      const paths: string[] = [];
      for await (const m of acms.text.searchStream({ query: args.query, maxResults: args.maxResults }, opts))
        paths.push(m.result?.path ?? "");
      return { paths };
    }
    case "fetchContent": {
      const res = await acms.rag.fetchContent({ ukoUris: args.ukoUris }, opts);
      return { paths: res.items.map((i) => i.path), missing: res.missing };
    }
    case "storeFragment": {
      const { fragment } = await acms.tiers.storeFragment({ fragment: { content: args.content, projectName: args.projectName } }, opts);
      return { fragmentId: fragment?.fragmentId, tier: Tier[fragment?.tier ?? Tier.UNSPECIFIED] };
    }
    case "getFragment": {
      const { fragment } = await acms.tiers.getFragment({ fragmentId: args.fragmentId }, opts);
      return { fragmentId: fragment?.fragmentId, content: fragment?.content, tier: Tier[fragment?.tier ?? Tier.UNSPECIFIED] };
    }
    case "deleteFragment": {
      const res = await acms.tiers.deleteFragment({ fragmentId: args.fragmentId }, opts);
      return { deleted: res.deleted };
    }
    case "deleteResource": {
      await acms.registry.deleteResource({ resourceId: args.resourceId }, opts);
      return {};
    }
    default:
      throw new Error(`unknown call ${step.call}`);
  }
}

/**
 * Runs `scenario` against a live server with @acms/client, one step after another, stopping at the first step
 * that does not answer as expected. Returns a result per step run.
 * @example const results = await runScenario(scenario, { baseUrl: "http://127.0.0.1:50051", apiKey, project: "local/demo-1" });
 */
export async function runScenario(scenario: Scenario, opts: RunOptions): Promise<StepResult[]> {
  const vars: Record<string, string> = { ...scenario.variables, project: opts.project };
  const headers: Record<string, string> = opts.traceparent ? { traceparent: opts.traceparent } : {};
  const base = createAcmsClient({ baseUrl: opts.baseUrl, apiKey: opts.apiKey, protocol: opts.protocol ?? "grpc" });
  const results: StepResult[] = [];
  try {
    for (const [i, step] of scenario.steps.entries()) {
      const acms = vars.scope !== undefined ? base.withScope(vars.scope) : base;
      const args = substitute(step.args, vars) as Record<string, unknown>;
      let observation: Observation | undefined;
      let failure: unknown;
      try {
        observation = await call(acms, step, args, headers);
      } catch (err) {
        failure = err;
      }
      let reason: string | undefined;
      if (step.expectError) {
        const expected = substitute(step.expectError, vars) as { code: string; scopeViolation?: Record<string, unknown> };
        if (failure === undefined) reason = `expected ${expected.code}, got an answer`;
        else if (!(failure instanceof ConnectError)) reason = `expected ${expected.code}, got ${String(failure)}`;
        else if (codeName(failure.code) !== expected.code)
          reason = `expected ${expected.code}, got ${codeName(failure.code)}: ${failure.rawMessage}`;
        else if (expected.scopeViolation) {
          const v = findScopeViolation(failure);
          reason = v
            ? difference(
                expected.scopeViolation,
                { resourceIds: v.resourceIds, projectNames: v.projectNames, scopeProjectNames: v.scopeProjectNames },
                "scopeViolation",
              )
            : "the refusal carries no ScopeViolation";
        }
      } else if (failure !== undefined) {
        reason = failure instanceof ConnectError ? `${codeName(failure.code)}: ${failure.rawMessage}` : String(failure);
      } else {
        reason = difference(substitute(step.expect ?? {}, vars), observation);
      }
      if (reason === undefined && observation)
        for (const [name, field] of Object.entries(step.save ?? {})) vars[name] = String(observation[field]);
      results.push({ index: i + 1, name: step.name, ok: reason === undefined, reason });
      if (reason !== undefined) break;
    }
  } finally {
    base.close();
  }
  return results;
}

/** A result as the three runners print it: `ok 5 keyword search` or `FAIL 13 delete the fragment: <reason>`. */
export function formatResult(r: StepResult): string {
  return r.ok ? `ok ${r.index} ${r.name}` : `FAIL ${r.index} ${r.name}: ${r.reason}`;
}
