/**
 * `acms mcp --scope <id>` over stdio, driven by the official TypeScript SDK client that spawns it as a desktop
 * agent would (an `mcpServers` entry: command, args, env with ACMS_URL and ACMS_API_KEY). The command forwards
 * every tool to the running server; the same tools, refusals and resources as POST /mcp.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { call, connectMcp, ok, refused } from "./mcp-client.js";
import { seedMcpFixture, type McpFixture } from "./mcp-fixture.js";

const BIN = join(__dirname, "..", "..", "bin", "acms.js");

let t: TestServer;
let f: McpFixture;
let mcp: Client;
let stderr = "";

beforeAll(async () => {
  t = await startTestServer();
  f = await seedMcpFixture(t);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "--scope", f.scope],
    env: { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  mcp = new Client({ name: "acms-stdio-test", version: "1.0.0" });
  await mcp.connect(transport);
}, 120_000);

afterAll(async () => {
  await mcp?.close();
  await t?.close(true);
});

test("lists the ten tools; searches, fetches in order, reads a UKO resource, remembers and recalls", async () => {
  const { tools } = await mcp.listTools();
  expect(tools).toHaveLength(10);
  const hits = ok<{ results: { uko_uri: string; path: string }[] }>(await call(mcp, "search", { query: "zebra", mode: "text" }));
  expect(hits.results.map((h) => h.path).sort()).toEqual(["guide/intro.md", "guide/setup.md", "src/main.ts"]);
  const uris = hits.results.map((h) => h.uko_uri).reverse();
  const fetched = ok<{ items: { uko_uri: string }[] }>(await call(mcp, "fetch", { uko_uris: uris }));
  expect(fetched.items.map((i) => i.uko_uri)).toEqual(uris);
  const read = await mcp.readResource({ uri: `uko://${f.docs}/guide/intro.md` });
  expect(read.contents[0]).toMatchObject({ text: expect.stringContaining("zebra introduction") });
  const stored = ok<{ fragment: { fragment_id: string } }>(
    await call(mcp, "remember", { content: "stdio memory", project_name: "local/api" }),
  );
  const recalled = ok<{ fragments: { fragment_id: string }[] }>(await call(mcp, "recall", { role: "strategist" }));
  expect(recalled.fragments.map((x) => x.fragment_id)).toContain(stored.fragment.fragment_id);
  expect(stderr).toBe("");
});

test("is refused with a typed explanation outside its scope, over stdio as over HTTP", async () => {
  const r = await call(mcp, "fetch", { uko_uris: [`uko://${f.secret}/vault.md`] });
  expect(refused(r).resource_ids).toEqual([f.secret]);
  refused(await call(mcp, "search", { query: "zebra", scope_id: f.otherScope }));
  const narrowed = ok<{ scope_id: string }>(await call(mcp, "narrow_scope", { deny_resource_ids: [f.code] }));
  const under = ok<{ results: { resource_id: string }[] }>(
    await call(mcp, "search", { query: "zebra", mode: "text", scope_id: narrowed.scope_id }),
  );
  expect(new Set(under.results.map((h) => h.resource_id))).toEqual(new Set([f.docs]));
  await expect(mcp.readResource({ uri: `uko://${f.secret}/vault.md` })).rejects.toMatchObject({ code: -32003 });
});

test("without a key or a scope, acms mcp says so on stderr and exits 1 before any protocol", async () => {
  const { execFile } = await import("node:child_process");
  const run = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? "", ...env } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });
  const noKey = await run(["mcp", "--scope", f.scope], { ACMS_URL: t.server.url });
  expect(noKey).toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining("no API key") });
  const noScope = await run(["mcp"], { ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer });
  expect(noScope).toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining("no scope") });
});

test("acms mcp answers line-delimited JSON-RPC on stdout only, and exits 0 when stdin ends", async () => {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, [BIN, "mcp", "--scope", f.scope], {
    env: { PATH: process.env.PATH ?? "", ACMS_URL: t.server.url, ACMS_API_KEY: t.keys.writer },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "search", arguments: { query: "zebra", mode: "text", top_k: 1 } } });
  // Stdin ends once both answers are out (the second needs the server's reply).
  while (out.split("\n").filter(Boolean).length < 2) await new Promise((r) => setTimeout(r, 20));
  child.stdin.end();
  expect(await exited).toBe(0);
  const lines = out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; result: { structuredContent?: { results: unknown[] } } });
  expect(lines.map((l) => l.id)).toEqual([1, 2]);
  expect(lines[1].result.structuredContent?.results).toHaveLength(1);
  expect(err).toBe("");
});

test("search with include_paths over stdio: the server's endpoint runs it, so it answers as over HTTP (exact, scoped)", async () => {
  const http = await connectMcp(t.server.url, t.keys.writer, f.scope);
  try {
    for (const mode of ["text", "hybrid"]) {
      const args = { query: "zebra", mode, top_k: 5, include_paths: ["guide/**"] };
      const overStdio = ok<{ results: { path: string }[]; exhaustive: boolean }>(await call(mcp, "search", args));
      expect(overStdio).toEqual(ok(await call(http, "search", args)));
      expect(overStdio.results.map((h) => h.path).sort()).toEqual(["guide/intro.md", "guide/setup.md"]);
      expect(overStdio.exhaustive).toBe(true);
    }
    // The scope_id check and the glob checks hold on the forwarded call too.
    refused(await call(mcp, "search", { query: "zebra", include_paths: ["**"], scope_id: f.otherScope }));
    expect((await call(mcp, "search", { query: "zebra", include_paths: ["../x"] })).structuredContent).toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    // resources/read under a narrowed scope (_meta.scope_id) over stdio as well.
    const child = ok<{ scope_id: string }>(await call(mcp, "narrow_scope", { exclude_paths: ["guide/setup.md"] })).scope_id;
    expect((await mcp.readResource({ uri: `uko://${f.docs}/guide/intro.md`, _meta: { scope_id: child } })).contents).toHaveLength(1);
    await expect(mcp.readResource({ uri: `uko://${f.docs}/guide/setup.md`, _meta: { scope_id: child } })).rejects.toMatchObject({
      code: -32003,
    });
    await expect(mcp.readResource({ uri: `uko://${f.docs}/guide/intro.md`, _meta: { scope_id: f.otherScope } })).rejects.toMatchObject({
      code: -32003,
    });
  } finally {
    await http.close();
  }
});
