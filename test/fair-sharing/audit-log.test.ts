/**
 * The audit log: every refused call (no key, out of scope, over quota) is one JSON line naming who, which
 * RPC, the code and the out-of-scope ids and projects, and never the request's content.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import type { AuditEntry } from "../../src/server/observability/audit-log.js";
import { CONTRACT_ENV, expectCode, seedWorld, type ContractWorld } from "../contract/contract-fixture.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

let t: TestServer;
let w: ContractWorld;
const logDir = mkdtempSync(join(tmpdir(), "acms-audit-"));
const logFile = join(logDir, "audit.log");

beforeAll(async () => {
  t = await startTestServer({ env: { ...CONTRACT_ENV, ACMS_AUDIT_LOG: logFile, ACMS_QUOTA_RATE: "20", ACMS_QUOTA_BURST: "20" } });
  w = await seedWorld(t);
});

afterAll(async () => {
  await t?.close(true);
  rmSync(logDir, { recursive: true, force: true });
});

/** The entries on disk so far (none while the file is not created yet); a line still being written is not one. */
function onDisk(): AuditEntry[] {
  let text: string;
  try {
    text = readFileSync(logFile, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  return text
    .split("\n")
    .slice(0, -1)
    .map((l) => JSON.parse(l) as AuditEntry);
}

/**
 * The log is appended asynchronously: waits until it holds at least `count` entries (a fixed pause raced
 * the write stream on a loaded machine), then answers every entry.
 */
async function entries(count = 0): Promise<AuditEntry[]> {
  for (;;) {
    const all = onDisk();
    if (all.length >= count) return all;
    await new Promise((r) => setTimeout(r, 20));
  }
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
  // One more refusal closes the sequence: the log is written in call order, so once it is on disk so is
  // everything the calls above wrote (an audited search or health check would show before it).
  await expectCode(t.client(ScopeService, "not-a-key").resolveScope({ projects: ["local/api"] }), Code.Unauthenticated);
  const log = (await entries(before + 4)).slice(before);
  expect(log.map((e) => [e.principal, e.rpc, e.code])).toEqual([
    [null, "acms.v1.RegistryService/ListProjects", "Unauthenticated"],
    ["writer", "acms.v1.ScopeService/ValidateResourceScope", "PermissionDenied"],
    ["writer", "acms.v1.ScopeService/ResolveScope", "PermissionDenied"],
    [null, "acms.v1.ScopeService/ResolveScope", "Unauthenticated"],
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
  // Calls in bursts of 60 at once: one after another, a loaded machine made them slower than the quota
  // refills (20 a second), and none was refused.
  let refused = false;
  for (let round = 0; round < 10 && !refused; round++) {
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, () =>
        reg.listProjects({}).then(
          () => false,
          () => true,
        ),
      ),
    );
    refused = outcomes.includes(true);
  }
  expect(refused).toBe(true);
  const log = (await entries(before + 1)).slice(before);
  expect(log.map((e) => [e.principal, e.code])).toContainEqual(["reader", "ResourceExhausted"]);
  expect(log.find((e) => e.code === "ResourceExhausted")?.limit).toMatch(/per second/);
});
