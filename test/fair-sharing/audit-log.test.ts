/**
 * The audit log: every refused call (no key, out of scope, over quota) is one JSON line naming who, which
 * RPC, the code and the out-of-scope ids and projects, and never the request's content.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import type { AuditEntry } from "../../src/server/audit-log.js";
import { CONTRACT_ENV, expectCode, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let t: TestServer;
let w: ContractWorld;
const logFile = join(mkdtempSync(join(tmpdir(), "acms-audit-")), "audit.log");

beforeAll(async () => {
  t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_AUDIT_LOG: logFile, ACMS_QUOTA_RATE: "20", ACMS_QUOTA_BURST: "20" } });
  w = await seedWorld(t);
});

afterAll(async () => {
  await t?.close(true);
});

async function entries(): Promise<AuditEntry[]> {
  // The log is appended asynchronously: wait until what was written is on disk.
  await new Promise((r) => setTimeout(r, 100));
  return readFileSync(logFile, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as AuditEntry);
}

it("records refusals with who, what and when, never the content", async () => {
  const before = (await entries()).length;
  await expectCode(t.client(RegistryService, "not-a-key").listProjects({}), Code.Unauthenticated);
  const secretQuery = "very secret query words";
  await expectCode(
    t.client(ScopeService, "writer", w.apiScope).validateResourceScope({ requestedResourceIds: [w.foreign] }),
    Code.PermissionDenied,
  );
  await expectCode(t.client(ScopeService, "writer").resolveScope({ projects: ["other/x"] }), Code.PermissionDenied);
  // Ordinary answers and health are not audited.
  await t.client(TextBackendService, "writer", w.apiScope).search({ query: secretQuery });
  await t.client(Health).check({});
  const log = (await entries()).slice(before);
  expect(log.map((e) => [e.principal, e.rpc, e.code])).toEqual([
    [null, "acms.v1.RegistryService/ListProjects", "Unauthenticated"],
    ["writer", "acms.v1.ScopeService/ValidateResourceScope", "PermissionDenied"],
    ["writer", "acms.v1.ScopeService/ResolveScope", "PermissionDenied"],
  ]);
  expect(log[1].resource_ids).toEqual([w.foreign]);
  expect(log[1].scope_project_names).toEqual(["local/api"]);
  expect(log[2].project_names).toEqual(["other/x"]);
  for (const e of log) expect(Number.isNaN(Date.parse(e.time))).toBe(false);
  const raw = readFileSync(logFile, "utf8");
  expect(raw).not.toContain(secretQuery);
  expect(raw).not.toContain(t.keys.writer);
});

it("records calls over quota with the limit passed", async () => {
  const before = (await entries()).length;
  const reg = t.client(RegistryService, "reader");
  let refused = false;
  for (let i = 0; i < 60 && !refused; i++) {
    refused = await reg.listProjects({}).then(
      () => false,
      () => true,
    );
  }
  expect(refused).toBe(true);
  const log = (await entries()).slice(before);
  expect(log.map((e) => [e.principal, e.code])).toContainEqual(["reader", "ResourceExhausted"]);
  expect(log.find((e) => e.code === "ResourceExhausted")?.limit).toMatch(/per second/);
});
