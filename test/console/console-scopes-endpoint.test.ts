import http from "node:http";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import type { ConsoleScopesPage } from "../../src/server/console/console-scopes-endpoint.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** A request over plain HTTP/1.1, as the browser makes it, with the headers given. */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  method = "GET",
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * The console's listing of a key's stored scopes (GET /console/api/scopes): authenticated like the RPCs,
 * only the caller's own scopes, paged; another principal's scope is never listed.
 */
describe("GET /console/api/scopes", () => {
  let t: TestServer;
  const made: Record<string, string[]> = { writer: [], reader: [], other: [] };

  const list = async (who: string, query = ""): Promise<ConsoleScopesPage> => {
    const r = await get(t.server.port, `/console/api/scopes${query}`, { authorization: `Bearer ${t.keys[who]}` });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(r.headers["cache-control"]).toBe("no-store");
    return JSON.parse(r.body) as ConsoleScopesPage;
  };

  beforeAll(async () => {
    t = await startTestServer();
    await t.client(RegistryService, "writer").createProject({ name: "local/api" });
    await t.client(RegistryService, "writer").registerResource({ project: "local/api", alias: "docs", kind: "docs" });
    await t.client(RegistryService, "other").createProject({ name: "other/app" });
    await t.client(RegistryService, "other").registerResource({ project: "other/app", alias: "app", kind: "code" });
    // Interleaved, so an owner's scopes are not simply a run of neighbouring ids.
    for (let i = 0; i < 3; i++) {
      for (const [who, project] of [
        ["writer", "local/api"],
        ["reader", "local/api"],
        ["other", "other/app"],
      ] as const) {
        if (who === "other" && i > 0) continue;
        const { scope } = await t.client(ScopeService, who).resolveScope({ projects: [project], includePaths: [`p${i}/**`] });
        made[who].push(scope!.scopeId);
      }
    }
  });

  afterAll(async () => {
    await t.close(true);
  });

  test("lists exactly the caller's own scopes, newest first, with what each holds", async () => {
    const page = await list("writer");
    expect(page.scopes.map((s) => s.scopeId)).toEqual([...made.writer].sort().reverse());
    expect(page.nextPageToken).toBe("");
    const newest = page.scopes[0];
    expect(newest).toMatchObject({
      projectNames: ["local/api"],
      resourceCount: 1,
      temporalScope: "current",
      includePaths: ["p2/**"],
      expandDescendants: true,
      parentScopeId: "",
    });
    expect(Number.isNaN(Date.parse(newest.createdAt))).toBe(false);
    expect((await list("reader")).scopes.map((s) => s.scopeId)).toEqual([...made.reader].sort().reverse());
    expect((await list("other")).scopes.map((s) => s.scopeId)).toEqual(made.other);
    // The admin made none: nobody else's appear.
    expect(await list("admin")).toEqual({ scopes: [], nextPageToken: "" });
    const everyone = new Set([...made.reader, ...made.other]);
    expect(page.scopes.some((s) => everyone.has(s.scopeId))).toBe(false);
  });

  test("pages: page_size and page_token walk the list once, and a token never opens another's scopes", async () => {
    const first = await list("writer", "?page_size=2");
    expect(first.scopes).toHaveLength(2);
    expect(first.nextPageToken).toBe(first.scopes[1].scopeId);
    const second = await list("writer", `?page_size=2&page_token=${first.nextPageToken}`);
    expect(second.scopes).toHaveLength(1);
    expect(second.nextPageToken).toBe("");
    expect([...first.scopes, ...second.scopes].map((s) => s.scopeId)).toEqual([...made.writer].sort().reverse());
    // Another principal's scope id as a token is only a place in the writer's own list.
    const after = await list("writer", `?page_token=${made.reader[2]}`);
    expect(after.scopes.every((s) => made.writer.includes(s.scopeId))).toBe(true);
  });

  test("refused without a valid key: missing, malformed or unknown is 401 and lists nothing", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Basic abc" },
      { authorization: "Bearer acms_not-a-key" },
      { authorization: `Bearer ${t.keys.writer}x` },
    ];
    for (const headers of attempts) {
      const r = await get(t.server.port, "/console/api/scopes", headers);
      expect(r.status).toBe(401);
      expect(r.headers["www-authenticate"]).toBe('Bearer realm="acms"');
      expect(JSON.parse(r.body)).toMatchObject({ code: "unauthenticated" });
      for (const id of [...made.writer, ...made.reader, ...made.other]) expect(r.body).not.toContain(id);
    }
  });

  test("bad paging is 400, other methods 405, and neither lists anything", async () => {
    const auth = { authorization: `Bearer ${t.keys.writer}` };
    for (const query of ["?page_size=0", "?page_size=101", "?page_size=abc", "?page_size=1.5", "?page_token=nope", "?page_token=../x"]) {
      const r = await get(t.server.port, `/console/api/scopes${query}`, auth);
      expect({ query, status: r.status }).toEqual({ query, status: 400 });
      expect(JSON.parse(r.body)).toMatchObject({ code: "invalid_argument" });
    }
    const post = await get(t.server.port, "/console/api/scopes", auth, "POST");
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET");
    expect((await get(t.server.port, "/console/api/other", auth)).status).toBe(404);
  });
});
