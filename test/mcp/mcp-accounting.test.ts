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
