import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { Role, Tier } from "../../gen/acms/v1/tiers_pb.js";
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

describe("acms tiers promote, demote and evict", () => {
  let scopeId: string;
  let scoped: AcmsClient;
  const store = async (content: string, tier: Tier) =>
    (await scoped.tiers.storeFragment({ fragment: { content, tier, projectName: "local/ops" } })).fragment!.fragmentId;
  const tierOf = async (id: string) => {
    const { fragments } = await scoped.tiers.getForActor({ role: Role.STRATEGIST });
    return fragments.find((f) => f.fragmentId === id)?.tier;
  };

  beforeAll(async () => {
    scopeId = (await acms.scope.resolveScope({ projects: ["local/ops"] })).scope!.scopeId;
    scoped = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer, scopeId });
  });
  afterAll(() => scoped.close());

  test("promote and demote move a fragment one tier; past the last tier they fail in one line", async () => {
    const id = await store("a note kept in warm", Tier.WARM);
    const up = await runCli(["tiers", "promote", id, "--scope", scopeId], env);
    expect(up).toMatchObject({ code: 0, stdout: `promoted ${id} to hot\n` });
    expect(await tierOf(id)).toBe(Tier.HOT);

    const again = await runCli(["tiers", "promote", id, "--scope", scopeId], env);
    expect(again.code).toBe(1);
    expect(expectOneErrorLine(again.stderr, "failed_precondition")).toContain("already in hot");

    const down = await runCli(["tiers", "demote", id, "--scope", scopeId, "--json"], env);
    expect(down.code).toBe(0);
    expect(JSON.parse(down.stdout)).toMatchObject({ fragment: { fragmentId: id, tier: "TIER_WARM" }, displaced: [] });
    expect(await tierOf(id)).toBe(Tier.WARM);
    expect((await runCli(["tiers", "demote", id, "--scope", scopeId], env)).stdout).toBe(`demoted ${id} to cold\n`);
    expect(await tierOf(id)).toBe(Tier.COLD);
    const below = await runCli(["tiers", "demote", id, "--scope", scopeId], env);
    expect(below.code).toBe(1);
    expect(expectOneErrorLine(below.stderr, "failed_precondition")).toContain("already in cold");

    const unknown = await runCli(["tiers", "promote", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--scope", scopeId], env);
    expect(unknown.code).toBe(1);
    expectOneErrorLine(unknown.stderr, "not_found");
    await scoped.tiers.evictLru({ tier: Tier.COLD, count: 100 });
  });

  test("evict moves the least recently used hot fragments to warm, and deletes from cold", async () => {
    const older = await store("the older hot note", Tier.HOT);
    const newer = await store("the newer hot note", Tier.HOT);
    const evicted = await runCli(["tiers", "evict", "--tier", "hot", "--count", "1", "--scope", scopeId], env);
    expect(evicted).toMatchObject({ code: 0, stdout: `evicted 1 from hot (moved to warm):\n  ${older}\n` });
    expect(await tierOf(older)).toBe(Tier.WARM);
    expect(await tierOf(newer)).toBe(Tier.HOT);

    await scoped.tiers.demoteFragment({ fragmentId: older });
    const deleted = await runCli(["tiers", "evict", "--tier", "cold", "--count", "5", "--scope", scopeId, "--json"], env);
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ fragmentIds: [older] });
    expect(await tierOf(older)).toBeUndefined();

    const none = await runCli(["tiers", "evict", "--tier", "cold", "--count", "1", "--scope", scopeId], env);
    expect(none).toMatchObject({ code: 0, stdout: "evicted 0 from cold (deleted)\n" });
  });

  test("evict and promote fail in one line on a bad tier, a bad count, or no scope", async () => {
    const badTier = await runCli(["tiers", "evict", "--tier", "lukewarm", "--count", "1", "--scope", scopeId], env);
    expect(badTier.code).toBe(1);
    expect(expectOneErrorLine(badTier.stderr, "invalid_argument")).toContain('--tier must be hot, warm or cold, got "lukewarm"');
    for (const count of ["0", "-2", "many"]) {
      const bad = await runCli(["tiers", "evict", "--tier", "hot", "--count", count, "--scope", scopeId], env);
      expect(bad.code).toBe(1);
      expect(expectOneErrorLine(bad.stderr, "invalid_argument")).toContain("--count must");
    }
    const noScope = await runCli(["tiers", "promote", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], env);
    expect(noScope.code).toBe(1);
    expect(expectOneErrorLine(noScope.stderr, "invalid_argument")).toContain("no scope");
  });
});

describe("acms rebuild", () => {
  let generation: bigint;
  beforeAll(async () => {
    const res = await acms.index.upsertDocuments(
      (async function* () {
        yield {
          resourceId,
          documents: [
            { path: "guide/boiler.md", content: "The boiler pressure valve is checked every Monday." },
            { path: "guide/roof.md", content: "Roof gutters are cleared in autumn." },
          ],
        };
      })(),
    );
    generation = res.indexGeneration;
  });

  test("rebuild re-indexes a resource by id, or by alias with --project and --full, and search still finds its documents", async () => {
    const upsert = await runCli(["rebuild", "--resource", resourceId], env);
    expect(upsert.code).toBe(0);
    const m = /^rebuilt 1 resource, 2 documents re-indexed; index generation (\d+)\n$/.exec(upsert.stdout);
    expect(m).not.toBeNull();
    expect(BigInt(m![1])).toBeGreaterThan(generation);

    const full = await runCli(["rebuild", "--resource", "handbook", "--project", "local/ops", "--full", "--json"], env);
    expect(full.code).toBe(0);
    const json = JSON.parse(full.stdout) as { resourcesRebuilt: number; documentsReindexed: number; indexGeneration: string };
    expect(json).toMatchObject({ resourcesRebuilt: 1, documentsReindexed: 2 });
    expect(BigInt(json.indexGeneration)).toBeGreaterThan(BigInt(m![1]));

    const scopeId = (await acms.scope.resolveScope({ projects: ["local/ops"] })).scope!.scopeId;
    const scoped = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer, scopeId });
    try {
      const { results } = await scoped.text.search({ query: "boiler pressure valve", maxResults: 5 });
      expect(results[0]?.ukoUri).toBe(`uko://${resourceId}/guide/boiler.md#0`);
    } finally {
      scoped.close();
    }
  });

  test("rebuild fails in one line: an alias without --project, an unknown alias, no --resource, a reader's key", async () => {
    const bare = await runCli(["rebuild", "--resource", "handbook"], env);
    expect(bare.code).toBe(1);
    expect(expectOneErrorLine(bare.stderr, "invalid_argument")).toContain("pass --project");

    const unknown = await runCli(["rebuild", "--resource", "no-such-alias", "--project", "local/ops"], env);
    expect(unknown.code).toBe(1);
    expectOneErrorLine(unknown.stderr, "not_found");

    const missing = await runCli(["rebuild"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/required option '--resource <id\|alias>'/);

    const reader = await runCli(["rebuild", "--resource", resourceId], { ...env, ACMS_API_KEY: t.keys.reader });
    expect(reader.code).toBe(1);
    expectOneErrorLine(reader.stderr, "permission_denied");
  });
});

describe("acms triples put", () => {
  let scoped: AcmsClient;
  beforeAll(async () => {
    const scopeId = (await acms.scope.resolveScope({ projects: ["local/ops"] })).scope!.scopeId;
    scoped = createAcmsClient({ baseUrl: t.server.url, apiKey: t.keys.writer, scopeId });
  });
  afterAll(() => scoped.close());

  /** The triples of the child resource's graph, as `s p o` lines in N-Triples-like form, sorted. */
  const graphLines = async () => {
    const { rows } = await scoped.graph.sparqlQuery({
      query: `SELECT ?s ?p ?o WHERE { GRAPH <uko://${childId}/> { ?s ?p ?o } }`,
    });
    const show = (term: { kind: TermKind; value: string; datatype: string; language: string } | undefined) =>
      !term
        ? "?"
        : term.kind === TermKind.IRI
          ? `<${term.value}>`
          : term.kind === TermKind.BLANK
            ? "_:b"
            : `"${term.value}"${term.language ? `@${term.language}` : term.datatype ? `^^<${term.datatype}>` : ""}`;
    return rows.map((r) => `${show(r.bindings.s)} ${show(r.bindings.p)} ${show(r.bindings.o)}`).sort();
  };

  test("put parses Turtle and N-Triples into the resource's graph, by alias or id, adding or --replace", async () => {
    const ttl = join(work, "boiler.ttl");
    writeFileSync(
      ttl,
      [
        "@prefix ex: <http://example.org/> .",
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .",
        'ex:boiler ex:label "Boiler"@en , "chaudière"@fr ;',
        '  ex:pressure "1.5"^^xsd:decimal ;',
        '  ex:checkedBy [ ex:name "Ana" ] .',
      ].join("\n"),
    );
    const put = await runCli(["triples", "put", ttl, "--resource", "appendix", "--project", "local/ops"], env);
    expect(put.code).toBe(0);
    expect(put.stdout).toMatch(new RegExp(`^put into ${childId}: 5 triples; index generation \\d+\\n$`));
    expect(await graphLines()).toEqual(
      [
        '<http://example.org/boiler> <http://example.org/label> "Boiler"@en',
        '<http://example.org/boiler> <http://example.org/label> "chaudière"@fr',
        '<http://example.org/boiler> <http://example.org/pressure> "1.5"^^<http://www.w3.org/2001/XMLSchema#decimal>',
        "<http://example.org/boiler> <http://example.org/checkedBy> _:b",
        '_:b <http://example.org/name> "Ana"',
      ].sort(),
    );

    const nt = join(work, "roof.nt");
    writeFileSync(nt, '<http://example.org/roof> <http://example.org/label> "Roof" .\n');
    const added = await runCli(["triples", "put", nt, "--resource", childId, "--json"], env);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ count: 1 });
    expect(await graphLines()).toHaveLength(6);

    const replaced = await runCli(["triples", "put", nt, "--resource", childId, "--replace"], env);
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toMatch(new RegExp(`^replaced the graph of ${childId}: 1 triple; index generation \\d+\\n$`));
    expect(await graphLines()).toEqual(['<http://example.org/roof> <http://example.org/label> "Roof"']);
  });

  test("put fails in one line, writing nothing: bad syntax, Turtle in an .nt file, a missing file, a bad format, a reader's key", async () => {
    const before = await graphLines();
    const bad = join(work, "bad.ttl");
    writeFileSync(bad, "@prefix ex: <http://example.org/> .\nex:a ex:b .\n");
    const syntax = await runCli(["triples", "put", bad, "--resource", childId], env);
    expect(syntax.code).toBe(1);
    expect(expectOneErrorLine(syntax.stderr, "invalid_argument")).toMatch(/bad\.ttl is not valid Turtle: .*line 2/);

    const turtleAsNt = join(work, "prefixed.nt");
    writeFileSync(turtleAsNt, "@prefix ex: <http://example.org/> .\nex:a ex:b ex:c .\n");
    const strict = await runCli(["triples", "put", turtleAsNt, "--resource", childId], env);
    expect(strict.code).toBe(1);
    expect(expectOneErrorLine(strict.stderr, "invalid_argument")).toContain("is not valid N-Triples");

    const missing = await runCli(["triples", "put", join(work, "nope.ttl"), "--resource", childId], env);
    expect(missing.code).toBe(1);
    expect(expectOneErrorLine(missing.stderr, "invalid_argument")).toContain("cannot read");

    const format = await runCli(["triples", "put", bad, "--resource", childId, "--format", "rdfxml"], env);
    expect(format.code).toBe(1);
    expectOneErrorLine(format.stderr, "invalid_argument");

    const nt = join(work, "roof.nt");
    const reader = await runCli(["triples", "put", nt, "--resource", childId, "--replace"], { ...env, ACMS_API_KEY: t.keys.reader });
    expect(reader.code).toBe(1);
    expectOneErrorLine(reader.stderr, "permission_denied");
    expect(await graphLines()).toEqual(before);
  });
});
