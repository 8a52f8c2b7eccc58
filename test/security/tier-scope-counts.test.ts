// Red team, issue 24 finding 13: GetForActor answered `scope_id` without `exhaustive`, and GetMetrics showed
// the misses one principal made under another of its scopes: a miss has no project, and it was counted once
// per principal, in every scope of it. API.md: misses count under the scope they were asked in, and no figure
// moves because of the same principal's calls under another scope. Run on the embedded store and PostgreSQL
// (where the counters live in the database all servers share).
import { Code } from "@connectrpc/connect";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { ContextTierService, Role, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { expectCode } from "../support/call-failure.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

describe.each([
  ["embedded", async (): Promise<Record<string, string>> => ({})],
  ["PostgreSQL", async (): Promise<Record<string, string>> => ({ ACMS_POSTGRES_URL: await freshPostgresDatabase() })],
])("tier answers follow the calling scope (%s)", (_engine, env) => {
  let t: TestServer;
  let first: string;
  let second: string;

  beforeAll(async () => {
    t = await startTestServer({ env: await env() });
    await t.client(RegistryService, "admin").createProject({ name: "local/api" });
    const scopes = t.client(ScopeService, "writer");
    // Two scopes of one principal over the same project.
    first = (await scopes.resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    second = (await scopes.resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    await t.client(ContextTierService, "writer", first).storeFragment({
      fragment: { fragmentId: "plan", content: "the plan", tier: Tier.HOT, projectName: "local/api" },
    });
  });

  afterAll(async () => {
    await t?.close(true);
  });

  const tiers = (scopeId: string) => t.client(ContextTierService, "writer", scopeId);

  it("a miss counts under the scope it was asked in, never in the principal's other scopes", async () => {
    const before = await tiers(first).getMetrics({});
    await expectCode(tiers(second).getFragment({ fragmentId: "nowhere" }), Code.NotFound);
    await expectCode(tiers(second).getFragment({ fragmentId: "nowhere-either" }), Code.NotFound);
    const after = await tiers(first).getMetrics({});
    expect({ misses: after.misses, hotMisses: after.hotMisses, warmMisses: after.warmMisses }).toEqual({
      misses: before.misses,
      hotMisses: before.hotMisses,
      warmMisses: before.warmMisses,
    });
    const asked = await tiers(second).getMetrics({});
    expect({ misses: asked.misses, hotMisses: asked.hotMisses, warmMisses: asked.warmMisses }).toEqual({
      misses: 2n,
      hotMisses: 2n,
      warmMisses: 2n,
    });
    await expectCode(tiers(first).getFragment({ fragmentId: "nowhere" }), Code.NotFound);
    expect((await tiers(first).getMetrics({})).misses).toBe(before.misses + 1n);
    expect((await tiers(second).getMetrics({})).misses).toBe(2n);
  });

  it("GetForActor answers scope_id and exhaustive", async () => {
    const res = await tiers(first).getForActor({ role: Role.STRATEGIST });
    expect(res.fragments.map((f) => f.fragmentId)).toEqual(["plan"]);
    expect(res.scopeId).toBe(first);
    expect(res.exhaustive).toBe(true);
  });
});
