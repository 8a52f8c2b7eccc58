import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { runCli } from "./cli-harness.js";

// `acms rm` and `acms projects rm` against a real server: without --yes they only say what would go (exit 1,
// nothing erased); with it they print the ErasureReport.

let t: TestServer;
let id: string;
const env = () => ({ ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer });

beforeAll(async () => {
  t = await startTestServer({ env: { ACMS_EMBEDDING_DIM: "4" } });
  const reg = t.client(RegistryService, "writer");
  await reg.createProject({ name: "local/rmcli" });
  id = (await reg.registerResource({ project: "local/rmcli", alias: "docs", kind: "site" })).resource!.id;
  await reg.registerResource({ project: "local/rmcli", alias: "other", kind: "repo" });
  await t.client(IndexService, "writer").upsertDocuments(
    (async function* () {
      yield {
        resourceId: id,
        documents: [{ path: "a.md", content: "alpha beta", metadata: {}, chunks: [{ text: "alpha beta", embedding: [1, 0, 0, 0] }] }],
      };
    })(),
  );
}, 60_000);

afterAll(async () => {
  await t?.close(true);
});

it("acms rm without --yes names what would go and erases nothing", async () => {
  const run = await runCli(["rm", "local/rmcli:docs"], env());
  expect(run.code).toBe(1);
  expect(run.stdout).toContain(`would erase resource ${id} (site; owned by local/rmcli; linked as local/rmcli:docs)`);
  expect(run.stdout).toContain("Nothing is erased without --yes");
  const { resources } = await t.client(RegistryService, "writer").listResources({ project: "local/rmcli" });
  expect(resources.map((r) => r.alias).sort()).toEqual(["docs", "other"]);
});

it("acms rm --yes erases the resource named project:alias and prints the report", async () => {
  const run = await runCli(["rm", "local/rmcli:docs", "--yes"], env());
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`erased resource ${id}:`);
  expect(run.stdout).toMatch(/documents \(every version\): 1\n\s+chunks: 1\n\s+vectors: 1\n\s+triples: 0\n\s+fragments: 0\n\s+links: 1\n/);
  const again = await runCli(["rm", id, "--yes"], env());
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/permission denied|PERMISSION_DENIED|not in key/i);
});

it("acms projects rm refuses a project that owns resources unless --cascade, and says so first", async () => {
  const dry = await runCli(["projects", "rm", "local/rmcli"], env());
  expect(dry.code).toBe(1);
  expect(dry.stdout).toContain("it owns 1 resource(s), so it is refused without --cascade");
  const refused = await runCli(["projects", "rm", "local/rmcli", "--yes"], env());
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/owns 1 resource/);
  const done = await runCli(["projects", "rm", "local/rmcli", "--cascade", "--yes", "--json"], env());
  expect(done.code).toBe(0);
  const report = JSON.parse(done.stdout).report;
  expect(report.resourceIds).toHaveLength(1);
  expect(report.links).toBe("1");
  const { projects } = await t.client(RegistryService, "writer").listProjects({});
  expect(projects.map((p) => p.name)).not.toContain("local/rmcli");
});
