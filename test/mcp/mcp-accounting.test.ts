/**
 * One access path: an MCP tool call is the RPC it maps to, run through the server's own interceptors, so it
 * counts in the metrics, is written to the audit log when refused, and spends the caller's quotas like any call.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { call, connectMcp, ok, refused } from "./mcp-client.js";
import { seedMcpFixture } from "./mcp-fixture.js";

/** The value of `acms_rpc_calls_total` for one method and code, read from the Prometheus endpoint. */
async function calls(t: TestServer, method: string, code: string): Promise<number> {
  const text = await (await fetch(t.server.metricsUrl!)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith("acms_rpc_calls_total{") && l.includes(`method="${method}"`) && l.includes(`code="${code}"`));
  return line === undefined ? 0 : Number(line.split(" ").pop());
}

test("a tool call counts as its RPC in acms_rpc_calls_total; a refusal is audited with the offenders", async () => {
  const dir = mkdtempSync(join(tmpdir(), "acms-mcp-audit-"));
  const audit = join(dir, "audit.log");
  const t = await startTestServer({ env: { ACMS_METRICS_PORT: "0", ACMS_AUDIT_LOG: audit } });
  try {
    const f = await seedMcpFixture(t);
    const mcp = await connectMcp(t.server.url, t.keys.writer, f.scope);
    try {
      const before = await calls(t, "Search", "ok");
      ok(await call(mcp, "search", { query: "zebra", mode: "text" }));
      ok(await call(mcp, "search", { query: "zebra", mode: "text" }));
      expect(await calls(t, "Search", "ok")).toBe(before + 2);
      const deniedBefore = await calls(t, "FetchContent", "permission_denied");
      refused(await call(mcp, "fetch", { uko_uris: [`uko://${f.secret}/vault.md`] }));
      expect(await calls(t, "FetchContent", "permission_denied")).toBe(deniedBefore + 1);
    } finally {
      await mcp.close();
    }
    await t.close(true);
    const entries = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { principal: string; rpc: string; code: string; resource_ids?: string[] });
    expect(entries).toContainEqual(
      expect.objectContaining({
        principal: "writer",
        rpc: "acms.v1.RagService/FetchContent",
        code: "PermissionDenied",
        resource_ids: [f.secret],
      }),
    );
  } finally {
    await t.close(true).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test("quotas: MCP calls spend the principal's request rate; over it a tool answers RESOURCE_EXHAUSTED", async () => {
  const t = await startTestServer({ env: { ACMS_QUOTA_RATE: "1", ACMS_QUOTA_BURST: "4" } });
  try {
    await t.client(RegistryService, "writer").createProject({ name: "local/api" });
    const scope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    const mcp = await connectMcp(t.server.url, t.keys.writer, scope);
    try {
      const codes: string[] = [];
      for (let i = 0; i < 40; i++) {
        const r = await call(mcp, "recall", {});
        codes.push(r.isError ? (r.structuredContent as { code: string }).code : "OK");
      }
      expect(codes).toContain("RESOURCE_EXHAUSTED");
      // Another principal's calls are not slowed by it.
      const otherScope = await t.client(RegistryService, "other").createProject({ name: "other/x" });
      expect(otherScope.project?.name).toBe("other/x");
    } finally {
      await mcp.close();
    }
  } finally {
    await t.close(true);
  }
});

test("quotas: every /mcp request is a call of the principal's quotas; a flood of tools/list, ping or initialize is refused with HTTP 429", async () => {
  const t = await startTestServer({ env: { ACMS_QUOTA_RATE: "1", ACMS_QUOTA_BURST: "5" } });
  try {
    await t.client(RegistryService, "writer").createProject({ name: "local/api" });
    const scope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    const post = (key: string, body: unknown) =>
      fetch(`${t.server.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${key}`,
          "acms-scope": scope,
        },
        body: JSON.stringify(body),
      });
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "flood", version: "1" } },
    };
    // One principal per kind of message, so each flood starts with a full bucket.
    for (const [principal, message] of [
      ["writer", { jsonrpc: "2.0", id: 1, method: "tools/list" }],
      ["reader", { jsonrpc: "2.0", id: 2, method: "ping" }],
      ["admin", initialize],
    ] as const) {
      // 30 at once: the burst (5) is answered, the rest refused (the rate refills one call a second, so at most a
      // few more get through however slowly the machine runs them).
      const flood = await Promise.all(
        Array.from({ length: 30 }, async () => {
          const res = await post(t.keys[principal], message);
          return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as unknown };
        }),
      );
      const statuses = flood.map((r) => r.status);
      expect(statuses).toContain(200);
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
      expect(flood.find((r) => r.status === 429)).toMatchObject({
        retryAfter: expect.stringMatching(/^[1-9][0-9]*$/),
        body: { id: message.id, error: { code: -32004, data: { code: "RESOURCE_EXHAUSTED", retry_after_ms: expect.any(Number) } } },
      });
      // A batch counts each message: in a batch of 10 pings sent now, (nearly) every ping is refused.
      const batch = await post(
        t.keys[principal],
        Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" })),
      );
      const answers = (await batch.json()) as { error?: { code: number } }[];
      expect(answers.filter((a) => a.error?.code === -32004).length).toBeGreaterThanOrEqual(7);
      if (answers.every((a) => a.error?.code === -32004)) expect(batch.status).toBe(429);
    }
    // Bodies refused before any message runs spend the quota as well: unparsable bodies sent now are refused as
    // over quota (429) rather than parsed (400), but for the odd call the refill lets through.
    const garbage = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${t.server.url}/mcp`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${t.keys.writer}`, "acms-scope": scope },
          body: "{not json",
        }).then(async (r) => (await r.text(), r.status)),
      ),
    );
    expect(garbage.filter((s) => s === 429).length).toBeGreaterThanOrEqual(7);
    expect(garbage.filter((s) => s !== 429 && s !== 400)).toEqual([]);
    // Another principal's quota is its own: its tools/list is answered meanwhile.
    const otherScope = await t.client(RegistryService, "other").createProject({ name: "other/x" });
    expect(otherScope.project?.name).toBe("other/x");
    const theirs = await post(t.keys.other, { jsonrpc: "2.0", id: 7, method: "tools/list" });
    expect(theirs.status).not.toBe(429);
  } finally {
    await t.close(true);
  }
});
