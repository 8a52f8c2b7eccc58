import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAcmsClient } from "../../src/client/create-acms-client.js";
import type { CliIo } from "../../src/cli/cli-io.js";
import { formatCliError } from "../../src/cli/cli-error.js";
import { urlFromServeEnv } from "../../src/cli/connection-options.js";
import { runServe } from "../../src/cli/serve.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { runCli } from "./cli-harness.js";

let t: TestServer;
let work: string;
let env: Record<string, string>;
const ids: Record<string, string> = {};
let scopeId: string;

beforeAll(async () => {
  t = await startTestServer();
  work = mkdtempSync(join(tmpdir(), "acms-cli-fixes-"));
  env = { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, HOME: work };
  const c = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  try {
    for (const project of ["local/fix-a", "local/fix-b"]) await c.registry.createProject({ name: project });
    const reg = async (project: string, alias: string, parentIds: string[] = []) =>
      (await c.registry.registerResource({ project, alias, kind: "docs", parentIds })).resource!.id;
    ids.api = await reg("local/fix-a", "api");
    ids.apiDocs = await reg("local/fix-a", "api-docs", [ids.api]);
    ids.shared = await reg("local/fix-a", "shared");
    ids.sharedB = await reg("local/fix-b", "shared");
    ids.web = await reg("local/fix-b", "web");
    scopeId = (await c.scope.resolveScope({ projects: ["local/fix-a", "local/fix-b"] })).scope!.scopeId;
  } finally {
    c.close();
  }
});
afterAll(async () => {
  await t.close(true);
  rmSync(work, { recursive: true, force: true });
});

/** The resource ids of a scope printed with --json. */
function resourcesOf(stdout: string): string[] {
  return (JSON.parse(stdout) as { resourceIds: string[] }).resourceIds.slice().sort();
}

describe("the CLI finds the server from ACMS_HOST and ACMS_PORT when ACMS_URL is unset", () => {
  test("ACMS_PORT alone reaches the server on loopback", async () => {
    const { ACMS_URL: _unset, ...rest } = env;
    const run = await runCli(["scope", "show", scopeId, "--json"], { ...rest, ACMS_PORT: String(t.server.port) });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ scopeId });
  });

  test("a wildcard ACMS_HOST is dialled on loopback; ACMS_URL wins over both", async () => {
    const { ACMS_URL: _unset, ...rest } = env;
    const wildcard = await runCli(["scope", "show", scopeId, "--json"], {
      ...rest,
      ACMS_HOST: "0.0.0.0",
      ACMS_PORT: String(t.server.port),
    });
    expect(wildcard.code).toBe(0);
    const both = await runCli(["scope", "show", scopeId, "--json"], { ...env, ACMS_PORT: "1" });
    expect(both.code).toBe(0);
  });

  test("urlFromServeEnv: defaults, IPv6 literals, and a bad port in one line", () => {
    expect(urlFromServeEnv({})).toBe("http://127.0.0.1:50051");
    expect(urlFromServeEnv({ ACMS_PORT: "6000" })).toBe("http://127.0.0.1:6000");
    expect(urlFromServeEnv({ ACMS_HOST: "::1", ACMS_PORT: "6000" })).toBe("http://[::1]:6000");
    expect(urlFromServeEnv({ ACMS_HOST: "::", ACMS_PORT: "6000" })).toBe("http://[::1]:6000");
    expect(urlFromServeEnv({ ACMS_HOST: "db.internal" })).toBe("http://db.internal:50051");
    expect(() => urlFromServeEnv({ ACMS_PORT: "0" })).toThrow(/ACMS_PORT must be a port number/);
    expect(() => urlFromServeEnv({ ACMS_PORT: "http" })).toThrow(/ACMS_PORT must be a port number/);
  });
});

describe("scope narrow --deny takes the names scope resolve --exclude takes", () => {
  test("a bare alias denies it in every project of the scope, with its descendants", async () => {
    const run = await runCli(["scope", "narrow", "--scope", scopeId, "--deny", "shared", "--json"], env);
    expect(run.stderr).toBe("");
    expect(resourcesOf(run.stdout)).toEqual([ids.api, ids.apiDocs, ids.web].sort());
    const withDescendants = await runCli(["scope", "narrow", "--scope", scopeId, "--deny", "api", "--json"], env);
    expect(resourcesOf(withDescendants.stdout)).toEqual([ids.shared, ids.sharedB, ids.web].sort());
  });

  test("namespace/project:alias names one project's resource; ULIDs and names mix", async () => {
    const run = await runCli(["scope", "narrow", "--scope", scopeId, "--deny", "local/fix-b:shared", "--deny", ids.web, "--json"], env);
    expect(run.stderr).toBe("");
    expect(resourcesOf(run.stdout)).toEqual([ids.api, ids.apiDocs, ids.shared].sort());
  });

  test("the result equals scope resolve --exclude with the same names", async () => {
    const narrowed = await runCli(["scope", "narrow", "--scope", scopeId, "--deny", "local/fix-a:shared,web", "--json"], env);
    const resolved = await runCli(
      ["scope", "resolve", "--project", "local/fix-a,local/fix-b", "--exclude", "local/fix-a:shared,web", "--json"],
      env,
    );
    expect(resourcesOf(narrowed.stdout)).toEqual(resourcesOf(resolved.stdout));
  });

  test("unknown and malformed names fail in one line naming each, and nothing is narrowed", async () => {
    const run = await runCli(
      ["scope", "narrow", "--scope", scopeId, "--deny", "nope", "--deny", "local/fix-a:missing", "--deny", "local/zzz:api"],
      env,
    );
    expect(run.code).toBe(1);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^acms: invalid_argument: --deny: /);
    expect(lines[0]).toContain('no resource has alias "nope"');
    expect(lines[0]).toContain('no resource has alias "missing" in local/fix-a');
    expect(lines[0]).toContain("local/zzz");
    expect(run.stdout).toBe("");
  });
});

function quietIo(dataDir: string): CliIo {
  return { stdout: { write: () => true }, stderr: { write: () => true }, env: { ACMS_DATA_DIR: dataDir }, setExitCode: () => undefined };
}

describe("acms serve fails cleanly before creating anything", () => {
  test("a --data-dir that is a file is one line, not a raw EEXIST", async () => {
    const file = join(work, "a-file");
    writeFileSync(file, "not a directory\n");
    const err = await runServe({ io: quietIo(join(work, "unused")), dataDir: file, port: "0", handleSignals: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const line = formatCliError(err);
    expect(line).toBe(`acms: invalid_argument: the data directory --data-dir (ACMS_DATA_DIR) ${file} is a file, not a directory`);
    const inside = await runServe({ io: quietIo(join(file, "sub")), port: "0", handleSignals: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(formatCliError(inside)).toBe(
      `acms: invalid_argument: the data directory ACMS_DATA_DIR ${join(file, "sub")} cannot be created: ${file} is a file`,
    );
  });

  test("a busy port fails in one line and leaves no data directory behind", async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    const dataDir = join(work, "never-created", "data");
    try {
      const err = await runServe({ io: quietIo(dataDir), port: String(port), handleSignals: false }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(formatCliError(err)).toBe(
        `acms: error: cannot listen on 127.0.0.1:${port}: the port is already in use (set --port or ACMS_PORT)`,
      );
      expect(existsSync(join(work, "never-created"))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });
});
