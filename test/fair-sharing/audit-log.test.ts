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

function readEntries(): AuditEntry[] {
  return readFileSync(logFile, { encoding: "utf8", flag: "a+" })
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as AuditEntry);
}

/**
 * The entries after the first `before`, once `done` holds for them: the log is appended asynchronously,
 * so it is polled (up to a generous bound, then the test's own assertions report what is there).
 */
async function entries(before = 0, done: (log: AuditEntry[]) => boolean = () => true): Promise<AuditEntry[]> {
  for (let i = 0; i < 200; i++) {
    const log = readEntries().slice(before);
    if (done(log)) return log;
    await new Promise((r) => setTimeout(r, 50));
  }
  return readEntries().slice(before);
}

it("records refusals with who, what and when, never the content", async () => {
  const before = readEntries().length;
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
  // A last refusal marks the end: what the calls above wrote is in the log before it (appends keep order).
  await expectCode(t.client(RegistryService, "end-marker-key").listProjects({}), Code.Unauthenticated);
  const log = (await entries(before, (l) => l.length >= 4)).slice(0, -1);
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
  const before = readEntries().length;
  const reg = t.client(RegistryService, "reader");
  // Sent all at once: one after another, a slow (loaded) machine could refill the bucket between calls.
  const outcomes = await Promise.all(
    Array.from({ length: 60 }, () =>
      reg.listProjects({}).then(
        () => false,
        () => true,
      ),
    ),
  );
  expect(outcomes).toContain(true);
  const log = await entries(before, (l) => l.some((e) => e.code === "ResourceExhausted"));
  expect(log.map((e) => [e.principal, e.code])).toContainEqual(["reader", "ResourceExhausted"]);
  expect(log.find((e) => e.code === "ResourceExhausted")?.limit).toMatch(/per second/);
});
