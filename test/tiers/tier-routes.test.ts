import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { ContextTierService, FragmentSchema, Role, Tier, type Fragment } from "../../gen/acms/v1/tiers_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { countTokens } from "../../src/domain/token-count.js";
import { isUlid } from "../../src/domain/ulid-id.js";
import { failure } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { prose } from "./tier-fixtures.js";

const ENV = {
  ACMS_CONTEXT_MAX_TOKENS_HOT: "200",
  ACMS_CONTEXT_MAX_DECISIONS_WARM: "3",
  ACMS_CONTEXT_MAX_DECISIONS_COLD: "3",
  ACMS_CONTEXT_SUMMARY_TOKENS: "16",
};

async function expectCode(p: Promise<unknown>, code: Code): Promise<ConnectError> {
  const err = await failure(p);
  expect(Code[err.code]).toBe(Code[code]);
  return err;
}

async function badField(p: Promise<unknown>): Promise<string> {
  const err = await expectCode(p, Code.InvalidArgument);
  const [detail] = err.findDetails(BadRequestSchema);
  expect(detail).toBeDefined();
  return detail.fieldViolations[0].field;
}

async function violation(p: Promise<unknown>) {
  const err = await expectCode(p, Code.PermissionDenied);
  const [sv] = err.findDetails(ScopeViolationSchema);
  expect(sv).toBeDefined();
  return sv;
}

/** `n` tokens of content. */
function tokens(n: number): string {
  return "w".concat(" w".repeat(n - 1));
}

function fragment(init: MessageInitShape<typeof FragmentSchema>): Fragment {
  return create(FragmentSchema, { projectName: "local/api", content: "a note", ...init });
}

let t: TestServer;
const ids: Record<string, string> = {};
const scopes: Record<string, string> = {};
type TierClient = Client<typeof ContextTierService>;
const tiers = (scope: keyof typeof scopes, principal = "writer", protocol: "connect" | "grpc" = "connect"): TierClient =>
  t.client(ContextTierService, principal, scopes[scope], protocol);

beforeAll(async () => {
  t = await startTestServer({ env: ENV });
  const admin = t.client(RegistryService, "admin");
  for (const name of ["local/api", "local/web", "other/x"]) await admin.createProject({ name });
  ids.API = (await admin.registerResource({ project: "local/api", alias: "api", kind: "repo" })).resource!.id;
  ids.WEB = (await admin.registerResource({ project: "local/web", alias: "web", kind: "repo" })).resource!.id;
  ids.X = (await admin.registerResource({ project: "other/x", alias: "x", kind: "repo" })).resource!.id;
  const resolve = async (principal: string, projects: string[]) =>
    (await t.client(ScopeService, principal).resolveScope({ projects })).scope!.scopeId;
  scopes.both = await resolve("writer", ["local/api", "local/web"]);
  scopes.api = await resolve("writer", ["local/api"]);
  scopes.other = await resolve("other", ["other/x"]);
  scopes.reader = await resolve("reader", ["local/api"]);
});
afterAll(async () => {
  expect(preventedLeaks.prevented).toBe(0);
  await t.close(true);
});

describe("ContextTierService over the network", () => {
  test("StoreFragment and GetFragment round-trip over Connect and gRPC", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      const c = tiers("both", "writer", protocol);
      const stored = (
        await c.storeFragment({ fragment: fragment({ content: "remember the plan", resourceId: ids.API, metadata: { step: "1" } }) })
      ).fragment!;
      expect(isUlid(stored.fragmentId)).toBe(true);
      expect(stored.tier).toBe(Tier.HOT);
      expect(stored.tokenCount).toBe(countTokens("remember the plan"));
      expect(stored.metadata).toEqual({ step: "1" });
      expect(timestampDate(stored.createdAt!).getTime()).toBeGreaterThan(Date.now() - 60_000);
      const got = (await c.getFragment({ fragmentId: stored.fragmentId })).fragment!;
      expect(got.content).toBe("remember the plan");
      expect(got.resourceId).toBe(ids.API);
      expect(timestampDate(got.lastAccessedAt!).getTime()).toBeGreaterThanOrEqual(timestampDate(stored.lastAccessedAt!).getTime());
    }
  });

  test("preconditions are INVALID_ARGUMENT naming the field", async () => {
    const c = tiers("both");
    expect(await badField(c.storeFragment({}))).toBe("fragment");
    expect(await badField(c.storeFragment({ fragment: fragment({ projectName: "" }) }))).toBe("fragment.project_name");
    expect(await badField(c.storeFragment({ fragment: fragment({ content: "" }) }))).toBe("fragment.content");
    expect(await badField(c.storeFragment({ fragment: fragment({ fragmentId: "no spaces" }) }))).toBe("fragment.fragment_id");
    expect(await badField(c.storeFragment({ fragment: fragment({ tier: 9 as Tier }) }))).toBe("fragment.tier");
    expect(await badField(c.storeFragment({ fragment: fragment({ content: tokens(201) }) }))).toBe("fragment.content");
    expect(await badField(c.getFragment({ fragmentId: "" }))).toBe("fragment_id");
    expect(await badField(c.evictLru({ tier: Tier.UNSPECIFIED, count: 1 }))).toBe("tier");
    expect(await badField(c.evictLru({ tier: Tier.HOT, count: 0 }))).toBe("count");
    expect(await badField(c.getForActor({ role: Role.UNSPECIFIED }))).toBe("role");
  });

  test("the access interceptor refuses out-of-scope project_name, resource_id and project_names refs", async () => {
    const c = tiers("api");
    const a = await violation(c.storeFragment({ fragment: fragment({ projectName: "local/web" }) }));
    expect(a.projectNames).toEqual(["local/web"]);
    expect(a.scopeProjectNames).toEqual(["local/api"]);
    const b = await violation(c.storeFragment({ fragment: fragment({ resourceId: ids.WEB }) }));
    expect(b.resourceIds).toEqual([ids.WEB]);
    const d = await violation(c.getForActor({ role: Role.STRATEGIST, projectNames: ["other/x"] }));
    expect(d.projectNames).toEqual(["other/x"]);
    await expectCode(t.client(ContextTierService, "writer").getMetrics({}), Code.FailedPrecondition);
  });

  test("another tenant's fragments are NOT_FOUND, never evicted, never listed, never counted", async () => {
    const mine = tiers("both");
    const theirs = tiers("other", "other");
    const f = (
      await theirs.storeFragment({
        fragment: fragment({ projectName: "other/x", fragmentId: "secret-1", content: "their secret", tier: Tier.COLD }),
      })
    ).fragment!;
    for (const call of [mine.getFragment, mine.promoteFragment, mine.demoteFragment]) {
      const err = await expectCode(call({ fragmentId: f.fragmentId }), Code.NotFound);
      expect(err.rawMessage).toBe("fragment secret-1 not found");
    }
    // Fragment ids are per principal: the same id is a fragment of mine, and theirs is untouched.
    const own = (await mine.storeFragment({ fragment: fragment({ fragmentId: "secret-1", content: "my own", tier: Tier.HOT }) })).fragment!;
    expect([own.fragmentId, own.content, own.tier]).toEqual(["secret-1", "my own", Tier.HOT]);
    const evicted = (await mine.evictLru({ tier: Tier.COLD, count: 100 })).fragmentIds;
    expect(evicted).not.toContain("secret-1");
    expect((await mine.getFragment({ fragmentId: "secret-1" })).fragment!.content).toBe("my own");
    const listed = (await mine.getForActor({ role: Role.STRATEGIST, includeFullContent: true })).fragments;
    expect(listed.some((x) => x.projectName === "other/x" || x.content.includes("their secret"))).toBe(false);
    expect((await mine.getMetrics({})).coldPopulation).toBe(0n);
    expect((await theirs.getMetrics({})).coldPopulation).toBe(1n);
    expect((await theirs.getFragment({ fragmentId: "secret-1" })).fragment!.content).toBe("their secret");
  });

  test("GetForActor answers the scope_id of the call's scope, over Connect and gRPC", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      for (const scope of ["both", "api"] as const) {
        const r = await tiers(scope, "writer", protocol).getForActor({ role: Role.STRATEGIST });
        expect(r.scopeId).toBe(scopes[scope]);
      }
    }
    expect(scopes.both).not.toBe(scopes.api);
  });

  test("a narrower scope does not see fragments of resources outside it", async () => {
    const web = (
      await tiers("both").storeFragment({ fragment: fragment({ projectName: "local/web", resourceId: ids.WEB, content: "web only" }) })
    ).fragment!;
    await expectCode(tiers("api").getFragment({ fragmentId: web.fragmentId }), Code.NotFound);
    expect((await tiers("api").getForActor({ role: Role.REVIEWER })).fragments.map((x) => x.fragmentId)).not.toContain(web.fragmentId);
  });
});

describe("tiers, roles and metrics over the network", () => {
  test("placement, displacement, promotion, demotion, eviction, role views and metrics", async () => {
    // A server of its own: counters count since the server started.
    const s = await startTestServer({ env: ENV });
    await s.client(RegistryService, "admin").createProject({ name: "local/flow" });
    const flowScope = (await s.client(ScopeService, "writer").resolveScope({ projects: ["local/flow"] })).scope!.scopeId;
    const c = s.client(ContextTierService, "writer", flowScope);
    const put = (id: string, n: number, tier = Tier.UNSPECIFIED) =>
      c.storeFragment({ fragment: fragment({ projectName: "local/flow", fragmentId: id, content: tokens(n), tier }) });
    await put("a", 90);
    await put("b", 90);
    const third = await put("c", 90);
    expect(third.displaced.map((d) => [d.fragmentId, d.fromTier, d.toTier, d.evicted])).toEqual([["a", Tier.HOT, Tier.WARM, false]]);
    await expectCode(c.promoteFragment({ fragmentId: "c" }), Code.FailedPrecondition);
    const demoted = (await c.demoteFragment({ fragmentId: "a" })).fragment!;
    expect(demoted.tier).toBe(Tier.COLD);
    expect(countTokens(demoted.summary)).toBeLessThanOrEqual(16);
    await expectCode(c.demoteFragment({ fragmentId: "a" }), Code.FailedPrecondition);
    const longText = prose(12, "plan");
    await put("notes", 1, Tier.COLD);
    await c.storeFragment({ fragment: fragment({ projectName: "local/flow", fragmentId: "notes", content: longText, tier: Tier.COLD }) });
    const view = async (role: Role, includeFullContent = false) => (await c.getForActor({ role, includeFullContent })).fragments;
    expect((await view(Role.STRATEGIST)).map((f) => [f.fragmentId, f.tier])).toEqual([
      ["c", Tier.HOT],
      ["b", Tier.HOT],
      ["notes", Tier.COLD],
      ["a", Tier.COLD],
    ]);
    expect((await view(Role.EXECUTOR)).map((f) => f.fragmentId)).toEqual(["c", "b"]);
    expect((await view(Role.REVIEWER)).map((f) => f.fragmentId)).toEqual(["c", "b"]);
    const summarised = (await view(Role.STRATEGIST)).find((f) => f.fragmentId === "notes")!;
    expect(summarised.content).toBe(summarised.summary);
    expect(countTokens(summarised.content)).toBeLessThanOrEqual(16);
    expect((await view(Role.STRATEGIST, true)).find((f) => f.fragmentId === "notes")!.content).toBe(longText);
    expect((await c.promoteFragment({ fragmentId: "notes" })).fragment!.tier).toBe(Tier.WARM);
    expect((await c.getFragment({ fragmentId: "notes" })).fragment!.content).toBe(longText);
    await c.getFragment({ fragmentId: "b" });
    await c.getFragment({ fragmentId: "a" });
    await expectCode(c.getFragment({ fragmentId: "nope" }), Code.NotFound);
    expect((await c.evictLru({ tier: Tier.HOT, count: 1 })).fragmentIds).toEqual(["c"]);
    expect((await c.evictLru({ tier: Tier.COLD, count: 1 })).fragmentIds).toEqual(["a"]);
    const m = await c.getMetrics({});
    expect(m.hotHits).toBe(1n);
    expect(m.warmHits).toBe(1n);
    expect(m.coldHits).toBe(1n);
    expect(m.misses).toBe(1n);
    expect(m.hotMisses).toBe(3n);
    expect(m.promotions).toBe(1n);
    expect(m.evictions).toBe(1n);
    expect([m.hotPopulation, m.warmPopulation, m.coldPopulation]).toEqual([1n, 2n, 0n]);
    expect(m.hotTokens).toBe(90n);
    await s.close(true);
  });
});

describe("concurrent calls", () => {
  test("hundreds of concurrent calls over Connect and gRPC leave every fragment in one tier and every budget held", async () => {
    const s = await startTestServer({ env: ENV });
    await s.client(RegistryService, "admin").createProject({ name: "local/busy" });
    const scopeId = (await s.client(ScopeService, "writer").resolveScope({ projects: ["local/busy"] })).scope!.scopeId;
    const clients = [s.client(ContextTierService, "writer", scopeId, "connect"), s.client(ContextTierService, "writer", scopeId, "grpc")];
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < 300; i++) {
      const c = clients[i % 2];
      const fragmentId = `busy-${i % 20}`;
      const k = i % 5;
      const call =
        k === 0
          ? c.storeFragment({
              fragment: fragment({ projectName: "local/busy", fragmentId, content: tokens(10 + (i % 50)), tier: (i % 4) as Tier }),
            })
          : k === 1
            ? c.getFragment({ fragmentId })
            : k === 2
              ? c.promoteFragment({ fragmentId })
              : k === 3
                ? c.demoteFragment({ fragmentId })
                : c.evictLru({ tier: (1 + (i % 3)) as Tier, count: 1 });
      calls.push(
        call.catch((err: unknown) => {
          const code = ConnectError.from(err).code;
          if (code !== Code.NotFound && code !== Code.FailedPrecondition) throw err;
        }),
      );
    }
    await Promise.all(calls);
    const listed = (await clients[0].getForActor({ role: Role.STRATEGIST })).fragments;
    expect(new Set(listed.map((f) => f.fragmentId)).size).toBe(listed.length);
    const m = await clients[1].getMetrics({});
    const count = (tier: Tier) => BigInt(listed.filter((f) => f.tier === tier).length);
    expect([m.hotPopulation, m.warmPopulation, m.coldPopulation]).toEqual([count(Tier.HOT), count(Tier.WARM), count(Tier.COLD)]);
    expect(m.hotTokens).toBeLessThanOrEqual(200n);
    expect(m.warmPopulation).toBeLessThanOrEqual(3n);
    expect(m.coldPopulation).toBeLessThanOrEqual(3n);
    expect(m.hotHits + m.hotMisses).toBe(60n);
    await s.close(true);
  });
});

describe("restart", () => {
  test("a restarted server finds every fragment in its tier, with its content and summary", async () => {
    await t.client(RegistryService, "admin").createProject({ name: "local/durable" });
    const scopeId = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/durable"] })).scope!.scopeId;
    const c = t.client(ContextTierService, "writer", scopeId);
    const text = prose(10, "restart");
    for (const [id, tier] of [
      ["durable-h", Tier.HOT],
      ["durable-w", Tier.WARM],
      ["durable-c", Tier.COLD],
    ] as const) {
      await c.storeFragment({ fragment: fragment({ projectName: "local/durable", fragmentId: id, content: `${id}: ${text}`, tier }) });
    }
    await c.getFragment({ fragmentId: "durable-h" });
    const before = (await c.getForActor({ role: Role.STRATEGIST, includeFullContent: true })).fragments;
    await t.close();
    t = await startTestServer({ env: ENV, dataDir: t.dataDir, keyEntries: t.keyEntries, keys: t.keys });
    const after = (await t.client(ContextTierService, "writer", scopeId).getForActor({ role: Role.STRATEGIST, includeFullContent: true }))
      .fragments;
    expect(after.map((f) => [f.fragmentId, f.tier, f.content, f.summary, f.tokenCount])).toEqual(
      before.map((f) => [f.fragmentId, f.tier, f.content, f.summary, f.tokenCount]),
    );
    expect(after).toHaveLength(3);
    expect(after.find((f) => f.fragmentId === "durable-c")!.summary.length).toBeGreaterThan(0);
    // Fragments of the earlier tests are still there too (hot written through).
    expect((await tiers("other", "other").getFragment({ fragmentId: "secret-1" })).fragment!.content).toBe("their secret");
  });
});
