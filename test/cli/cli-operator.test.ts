import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAcmsClient, type AcmsClient } from "../../src/client/create-acms-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { runCli } from "./cli-harness.js";

let t: TestServer;
let work: string;
let env: Record<string, string>;
let acms: AcmsClient;
let resourceId: string;
let childId: string;

beforeAll(async () => {
  t = await startTestServer();
  work = mkdtempSync(join(tmpdir(), "acms-cli-operator-"));
  env = { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer, HOME: work };
  acms = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer });
  await acms.registry.createProject({ name: "local/ops" });
  await acms.registry.createProject({ name: "local/empty" });
  resourceId = (await acms.registry.registerResource({ project: "local/ops", alias: "handbook", kind: "docs" })).resource!.id;
  childId = (await acms.registry.registerResource({ project: "local/ops", alias: "appendix", kind: "docs", parentIds: [resourceId] }))
    .resource!.id;
});
afterAll(async () => {
  acms.close();
  await t.close(true);
  rmSync(work, { recursive: true, force: true });
});

/** Exactly one line on stderr, `acms: <code>: ...`, and no stack trace. */
function expectOneErrorLine(stderr: string, code: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^acms: ${code}: `));
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0];
}

describe("acms projects list and resources list", () => {
  test("projects list prints the projects the key sees, as a table and as JSON", async () => {
    const table = await runCli(["projects", "list"], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^PROJECT\s+CREATED$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(expect.arrayContaining(["local/ops", "local/empty"]));
    expect(lines.find((l) => l.startsWith("local/ops"))).toMatch(/^local\/ops\s+\d{4}-\d\d-\d\dT[\d:.]+Z$/);

    const json = await runCli(["projects", "list", "--json"], env);
    expect(json.code).toBe(0);
    const names = (JSON.parse(json.stdout) as { projects: { name: string }[] }).projects.map((p) => p.name);
    const served = (await acms.registry.listProjects({})).projects.map((p) => p.name);
    expect(names).toEqual(served);
  });

  test("resources list prints a project's resources with alias, kind, owner and parents", async () => {
    const table = await runCli(["resources", "list", "--project", "local/ops"], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^RESOURCE\s+ALIAS\s+KIND\s+OWNER\s+PARENTS$/);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${resourceId}\\s+handbook\\s+docs\\s+local/ops\\s+-$`)));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${childId}\\s+appendix\\s+docs\\s+local/ops\\s+${resourceId}$`)));
    expect(lines).toHaveLength(3);

    const json = JSON.parse((await runCli(["resources", "list", "--project", "local/ops", "--json"], env)).stdout) as {
      resources: { id: string; alias: string }[];
    };
    expect(json.resources.map((r) => [r.id, r.alias]).sort()).toEqual(
      [
        [resourceId, "handbook"],
        [childId, "appendix"],
      ].sort(),
    );

    const empty = await runCli(["resources", "list", "--project", "local/empty"], env);
    expect(empty).toMatchObject({ code: 0, stdout: "no resources in local/empty\n" });
  });

  test("resources list fails in one line: no --project, a project the key may not touch, no key", async () => {
    const missing = await runCli(["resources", "list"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/required option '--project <name>'/);

    const denied = await runCli(["resources", "list", "--project", "other/secret"], env);
    expect(denied.code).toBe(1);
    expectOneErrorLine(denied.stderr, "permission_denied");

    const noKey = await runCli(["projects", "list"], { ACMS_URL: t.server.url, HOME: work });
    expect(noKey.code).toBe(1);
    expectOneErrorLine(noKey.stderr, "invalid_argument");
  });
});
