import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tier } from "../../gen/acms/v1/tiers_pb.js";
import { createAcmsClient, type AcmsClient } from "../../src/client/create-acms-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { runCli } from "./cli-harness.js";

// The CLI's lifecycle commands against the real server: listings walk every page, `scopes list`, `unlink`
// and `tiers delete`.

let t: TestServer;
let work: string;
let env: Record<string, string>;
let acms: AcmsClient;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestServer();
  work = mkdtempSync(join(tmpdir(), "acms-cli-lifecycle-"));
  env = { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, HOME: work };
  acms = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  await acms.registry.createProject({ name: "local/big" });
  await acms.registry.createProject({ name: "local/borrower" });
  // More than one page of the largest page size the CLI asks for (1000), so `resources list` must follow tokens.
  for (let i = 0; i < 1003; i++) {
    const alias = `r${String(i).padStart(4, "0")}`;
    ids[alias] = (await acms.registry.registerResource({ project: "local/big", alias, kind: "docs" })).resource!.id;
  }
  await acms.registry.linkResource({ project: "local/borrower", resourceId: ids.r0001, alias: "lent" });
}, 120_000);

afterAll(async () => {
  acms.close();
  await t.close(true);
  rmSync(work, { recursive: true, force: true });
});

function expectOneErrorLine(stderr: string, code: string): void {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^acms: ${code}: `));
}

test("resources list walks every page", async () => {
  const json = await runCli(["resources", "list", "--project", "local/big", "--json"], env);
  expect(json.code).toBe(0);
  const listed = (JSON.parse(json.stdout) as { resources: { alias: string }[] }).resources.map((r) => r.alias);
  expect(listed).toEqual(Object.keys(ids).sort());
  const table = await runCli(["resources", "list", "--project", "local/big"], env);
  expect(table.stdout.trimEnd().split("\n")).toHaveLength(1 + 1003);
});

test("projects list walks every page", async () => {
  const json = await runCli(["projects", "list", "--json"], env);
  expect((JSON.parse(json.stdout) as { projects: { name: string }[] }).projects.map((p) => p.name)).toEqual([
    "local/big",
    "local/borrower",
  ]);
});

test("scopes list prints the key's scopes newest first, never another key's", async () => {
  const older = (await acms.scope.resolveScope({ projects: ["local/borrower"] })).scope!.scopeId;
  const newer = (await acms.scope.resolveScope({ projects: ["local/big"] })).scope!.scopeId;
  const table = await runCli(["scopes", "list"], env);
  expect(table.code).toBe(0);
  const lines = table.stdout.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^SCOPE\s+CREATED\s+PROJECTS\s+RESOURCES\s+TEMPORAL\s+PARENT$/);
  expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([newer, older]);
  expect(lines[1]).toMatch(new RegExp(`^${newer}\\s+\\S+\\s+local/big\\s+1003\\s+current\\s+-$`));
  const json = JSON.parse((await runCli(["scopes", "list", "--json"], env)).stdout) as { scopes: { scopeId: string }[] };
  expect(json.scopes.map((s) => s.scopeId)).toEqual([newer, older]);
  const reader = await runCli(["scopes", "list"], { ...env, ACMS_API_KEY: t.keys.reader });
  expect(reader).toMatchObject({ code: 0, stdout: "no scopes\n" });
});

test("unlink removes a borrowed link by alias; the owner's link and a missing one fail in one line", async () => {
  const owner = await runCli(["unlink", "local/big", "r0001"], env);
  expect(owner.code).toBe(1);
  expectOneErrorLine(owner.stderr, "failed_precondition");
  expect(owner.stderr).toMatch(/delete the resource/);
  const done = await runCli(["unlink", "local/borrower", "lent"], env);
  expect(done).toMatchObject({ code: 0, stdout: `unlinked ${ids.r0001} (alias "lent") from local/borrower\n` });
  expect((await acms.registry.listResources({ project: "local/borrower" })).resources).toEqual([]);
  const again = await runCli(["unlink", "local/borrower", ids.r0001], env);
  expect(again.code).toBe(1);
  expectOneErrorLine(again.stderr, "not_found");
});

test("tiers delete removes a fragment and fails in one line when the scope holds no such fragment", async () => {
  const scopeId = (await acms.scope.resolveScope({ projects: ["local/big"] })).scope!.scopeId;
  const scoped = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer, scopeId });
  try {
    await scoped.tiers.storeFragment({ fragment: { fragmentId: "cli-del", content: "to go", projectName: "local/big", tier: Tier.COLD } });
    expect(await runCli(["tiers", "delete", "cli-del", "--scope", scopeId], env)).toMatchObject({ code: 0, stdout: "deleted cli-del\n" });
    const again = await runCli(["tiers", "delete", "cli-del", "--scope", scopeId], env);
    expect(again.code).toBe(1);
    expectOneErrorLine(again.stderr, "not_found");
    const json = await runCli(["tiers", "delete", "cli-del", "--scope", scopeId, "--json"], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ deleted: false });
  } finally {
    scoped.close();
  }
});
