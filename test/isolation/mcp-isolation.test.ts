/**
 * Tries to break isolation through every MCP tool and resources/read: another tenant's scope ids, URIs, graph
 * IRIs (FROM, FROM NAMED, GRAPH in sparql), projects, resources and fragments, and scope_id arguments that are
 * not the connection's scope nor narrowed from it. Every attempt must be refused (a typed refusal) or find
 * nothing; no answer may carry the other tenant's content.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ulid } from "ulid";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { call, connectMcp, ok, refused } from "../mcp/mcp-client.js";
import { EX, seedMcpFixture, type McpFixture } from "../mcp/mcp-fixture.js";

let t: TestServer;
let f: McpFixture;
let writer: Client;
let other: Client;
/** A scope "other" narrowed from its own: a real scope, of another principal. */
let otherChild: string;

/** Words only the other tenant's documents, graph and fragment hold. */
const SECRET_WORDS = ["launch codes", "other's private decision", "zebra secret label"];

/** No tenant-held word of "other" anywhere in a result (text or structured content). */
function expectNoLeak(r: CallToolResult): void {
  const all = JSON.stringify(r);
  for (const w of SECRET_WORDS) expect(all).not.toContain(w);
}

beforeAll(async () => {
  t = await startTestServer();
  f = await seedMcpFixture(t);
  writer = await connectMcp(t.server.url, t.keys.writer, f.scope);
  other = await connectMcp(t.server.url, t.keys.other, f.otherScope);
  otherChild = (await t.client(ScopeService, "other", f.otherScope).narrowScope({ excludePaths: ["x/**"] })).scope!.scopeId;
}, 60_000);

afterAll(async () => {
  await writer?.close();
  await other?.close();
  await t?.close(true);
});

/** One call of every tool with harmless arguments, under `scope_id` when given. */
function everyTool(scopeId?: string): [string, Record<string, unknown>][] {
  const s = scopeId === undefined ? {} : { scope_id: scopeId };
  return [
    ["search", { query: "zebra", ...s }],
    ["search", { query: "zebra", mode: "text", ...s }],
    ["fetch", { uko_uris: [`uko://${f.docs}/guide/intro.md`], ...s }],
    ["sparql", { query: "SELECT * WHERE { ?s ?p ?o }", ...s }],
    ["get_triples", { subject: `${EX}docs`, ...s }],
    ["traverse", { start: `${EX}docs`, ...s }],
    ["list_resources", { ...s }],
    ["narrow_scope", { exclude_paths: ["tmp/**"], ...s }],
    ["remember", { content: "x", project_name: "local/api", ...s }],
    ["recall", { ...s }],
    ["forget", { fragment_id: f.otherFragment, ...s }],
  ];
}

test("another tenant's scope id as scope_id is refused by every tool, with the connection scope's projects named", async () => {
  for (const [name, args] of everyTool(f.otherScope)) {
    const r = await call(writer, name, args);
    const v = refused(r);
    expect({ name, scope_project_names: v.scope_project_names }).toEqual({ name, scope_project_names: ["local/api"] });
    expectNoLeak(r);
  }
});

test("scope_ids not derived from the connection's scope are refused: another's narrowed scope, an unknown id, garbage", async () => {
  for (const bad of [otherChild, ulid(), "not-a-scope", `${f.scope}x`]) {
    for (const [name, args] of everyTool(bad)) refused(await call(writer, name, args));
  }
});

test("a scope the caller narrowed is not accepted under another principal's connection", async () => {
  const mine = ok<{ scope_id: string }>(await call(writer, "narrow_scope", { deny_resource_ids: [f.code] })).scope_id;
  for (const [name, args] of everyTool(mine)) {
    const r = await call(other, name, args);
    refused(r);
    expect(JSON.stringify(r)).not.toContain("zebra introduction");
  }
});

test("a connection whose acms-scope header is another principal's scope gets NOT_FOUND from every tool, and no data", async () => {
  const stolen = await connectMcp(t.server.url, t.keys.writer, f.otherScope);
  try {
    for (const [name, args] of everyTool()) {
      const r = await call(stolen, name, args);
      expect({ name, isError: r.isError, code: (r.structuredContent as { code?: string }).code }).toEqual({
        name,
        isError: true,
        code: "NOT_FOUND",
      });
      expectNoLeak(r);
    }
    await expect(stolen.readResource({ uri: `uko://${f.secret}/vault.md` })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });
  } finally {
    await stolen.close();
  }
});

test("fetch and resources/read refuse another tenant's URIs, alone or among in-scope ones", async () => {
  const secretUri = `uko://${f.secret}/vault.md`;
  for (const uris of [
    [secretUri],
    [`uko://${f.docs}/guide/intro.md`, secretUri],
    [`uko://${f.secret}/nope.md`],
    [`uko://${f.secret}/vault.md#0`],
  ]) {
    const r = await call(writer, "fetch", { uko_uris: uris });
    expect(refused(r).resource_ids).toEqual([f.secret]);
    expectNoLeak(r);
  }
  for (const uri of [secretUri, `uko://${f.secret}/vault.md#0`, `uko://${ulid()}/x.md`]) {
    const err = await writer.readResource({ uri }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32003, data: { code: "PERMISSION_DENIED", scope_project_names: ["local/api"] } });
    expect(JSON.stringify(err)).not.toContain("launch codes");
  }
});

test("sparql naming another tenant's graph (FROM, FROM NAMED, GRAPH) is refused; the default graph never holds it", async () => {
  const g = `uko://${f.secret}/`;
  for (const query of [
    `SELECT * FROM <${g}> WHERE { ?s ?p ?o }`,
    `SELECT * FROM NAMED <${g}> WHERE { GRAPH ?g { ?s ?p ?o } }`,
    `SELECT * WHERE { GRAPH <${g}> { ?s ?p ?o } }`,
    `ASK { GRAPH <${g}> { ?s ?p ?o } }`,
    `CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <${g}> { ?s ?p ?o } }`,
  ]) {
    const r = await call(writer, "sparql", { query });
    refused(r);
    expectNoLeak(r);
  }
  const all = await call(writer, "sparql", { query: "SELECT ?g ?o WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }" });
  expectNoLeak(all);
  expect(JSON.stringify(ok(all))).not.toContain(f.secret);
  const updates = await call(writer, "sparql", { query: `INSERT DATA { GRAPH <${g}> { <${EX}a> <${EX}b> "c" } }` });
  expect(updates.isError).toBe(true);
});

test("get_triples and traverse from another tenant's nodes find nothing", async () => {
  for (const r of [
    await call(writer, "get_triples", { subject: `${EX}secret` }),
    await call(writer, "traverse", { start: `${EX}secret`, depth: 3 }),
    await call(writer, "traverse", { start: `${EX}docs`, depth: 8 }),
  ]) {
    expectNoLeak(r);
    if (!r.isError) expect(JSON.stringify(r.structuredContent)).not.toContain(`${EX}secret`);
  }
  const uriSubject = await call(writer, "get_triples", { subject: `uko://${f.secret}/vault.md` });
  expect(uriSubject.isError ? refused(uriSubject).resource_ids : ok<{ triples: unknown[] }>(uriSubject).triples).toEqual(
    uriSubject.isError ? [f.secret] : [],
  );
});

test("search, list_resources and recall never show the other tenant", async () => {
  for (const r of [
    await call(writer, "search", { query: "zebra vault launch codes secret" }),
    await call(writer, "search", { query: "vault", mode: "text", top_k: 1000 }),
    await call(writer, "list_resources", {}),
    await call(writer, "recall", { role: "strategist" }),
  ]) {
    expect(JSON.stringify(ok(r))).not.toContain(f.secret);
    expectNoLeak(r);
  }
});

test("narrow_scope cannot widen: another tenant's project is refused; denying its resource changes nothing", async () => {
  const r = await call(writer, "narrow_scope", { projects: ["other/secret"] });
  expect(refused(r).project_names).toEqual(["other/secret"]);
  const same = ok<{ resource_ids: string[] }>(await call(writer, "narrow_scope", { deny_resource_ids: [f.secret] }));
  expect(same.resource_ids.sort()).toEqual([f.docs, f.code].sort());
});

test("remember and recall refuse another tenant's project and resource", async () => {
  const project = await call(writer, "remember", { content: "plant", project_name: "other/secret" });
  expect(refused(project).project_names).toEqual(["other/secret"]);
  const resource = await call(writer, "remember", { content: "plant", project_name: "local/api", resource_id: f.secret });
  expect(refused(resource).resource_ids).toEqual([f.secret]);
  const recall = await call(writer, "recall", { project_names: ["other/secret"] });
  expect(refused(recall).project_names).toEqual(["other/secret"]);
  expectNoLeak(recall);
});

test("forget cannot delete another tenant's fragment: the owner still recalls it", async () => {
  const r = await call(writer, "forget", { fragment_id: f.otherFragment });
  // Not found in the caller's scope (deleted: false), or an error; never deleted.
  if (!r.isError) expect(ok<{ deleted: boolean }>(r).deleted).toBe(false);
  const theirs = ok<{ fragments: { fragment_id: string }[] }>(await call(other, "recall", {}));
  expect(theirs.fragments.map((x) => x.fragment_id)).toContain(f.otherFragment);
});

test("concurrent requests of two tenants with the same JSON-RPC id each get their own answer", async () => {
  const post = (key: string, scope: string) =>
    fetch(`${t.server.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${key}`,
        "acms-scope": scope,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "search", arguments: { query: "zebra", mode: "text" } },
      }),
    }).then(
      async (r) =>
        (await r.json()) as { id: number; result: { structuredContent: { scope_id: string; results: { resource_id: string }[] } } },
    );
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? post(t.keys.writer, f.scope) : post(t.keys.other, f.otherScope))),
  );
  answers.forEach((a, i) => {
    const mine = i % 2 === 0;
    expect(a.id).toBe(1);
    expect(a.result.structuredContent.scope_id).toBe(mine ? f.scope : f.otherScope);
    const owners = new Set(a.result.structuredContent.results.map((h) => h.resource_id));
    expect(owners).toEqual(mine ? new Set([f.docs, f.code]) : new Set([f.secret]));
  });
});

test("a malformed UKO URI is INVALID_ARGUMENT, through fetch and resources/read", async () => {
  const r = await call(writer, "fetch", { uko_uris: ["not-a-uri"] });
  expect(r.structuredContent).toMatchObject({ code: "INVALID_ARGUMENT" });
  await expect(writer.readResource({ uri: "uko://not a ulid/x" })).rejects.toMatchObject({
    code: -32602,
    data: { code: "INVALID_ARGUMENT" },
  });
});

test("resources/read under _meta.scope_id: a scope narrowed from the connection's reads within it; any other scope is refused", async () => {
  const intro = `uko://${f.docs}/guide/intro.md`;
  const setup = `uko://${f.docs}/guide/setup.md`;
  const child = ok<{ scope_id: string }>(await call(writer, "narrow_scope", { exclude_paths: ["guide/setup.md"] })).scope_id;
  // Under the narrowed scope: in-scope units read, the excluded one is refused, as FetchContent under it.
  const read = await writer.readResource({ uri: intro, _meta: { scope_id: child } });
  expect(read.contents.map((c) => c.uri)).toEqual([intro]);
  await expect(writer.readResource({ uri: setup, _meta: { scope_id: child } })).rejects.toMatchObject({
    code: -32003,
    data: { code: "PERMISSION_DENIED" },
  });
  // The connection's own scope as scope_id, and no scope_id: the connection's scope.
  expect((await writer.readResource({ uri: setup, _meta: { scope_id: f.scope } })).contents).toHaveLength(1);
  expect((await writer.readResource({ uri: setup })).contents).toHaveLength(1);
  // Foreign scopes: another tenant's, another tenant's narrowed one, unknown ids, garbage. Refused, even for in-scope URIs.
  for (const bad of [f.otherScope, otherChild, ulid(), "not-a-scope", `${f.scope}x`]) {
    for (const uri of [intro, `uko://${f.secret}/vault.md`]) {
      const err = await writer.readResource({ uri, _meta: { scope_id: bad } }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: -32003, data: { code: "PERMISSION_DENIED", scope_project_names: ["local/api"] } });
      expect(JSON.stringify(err)).not.toContain("launch codes");
      expect(JSON.stringify(err)).not.toContain("zebra introduction");
    }
  }
  // A scope the writer narrowed, used on the other tenant's connection: refused, nothing of the writer's read.
  const err = await other.readResource({ uri: intro, _meta: { scope_id: child } }).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: -32003, data: { code: "PERMISSION_DENIED" } });
  expect(JSON.stringify(err)).not.toContain("zebra introduction");
  // A scope_id that is not a string is a bad argument.
  await expect(writer.readResource({ uri: intro, _meta: { scope_id: 42 } })).rejects.toMatchObject({
    code: -32602,
    data: { code: "INVALID_ARGUMENT" },
  });
});
