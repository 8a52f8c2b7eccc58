import { Code } from "@connectrpc/connect";
import type { ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import { ContextTierService, Role, Tier, type Fragment } from "../../gen/acms/v1/tiers_pb.js";
import { preventedLeaks } from "../../src/domain/leak-guard.js";
import { badFields, expectCode } from "../support/call-failure.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { buildFixture, ENV, expectViolation, resolve, type IsolationFixture } from "./isolation-fixture.js";

let t: TestServer;
let f: IsolationFixture;
const S: Record<"api" | "web" | "both" | "noChild" | "secret" | "readerApi", ResourceScope> = {} as never;
/** Fragment ids by name; the owner scope of each is in OWNER. */
const F: Record<string, string> = {};
const OWNER: Record<string, keyof typeof S> = {};
const PRINCIPAL: Record<keyof typeof S, string> = {
  api: "writer",
  web: "writer",
  both: "writer",
  noChild: "writer",
  secret: "other",
  readerApi: "reader",
};
/**
 * Ids of other principals' fragments that the api scope (writer) stored fragments of its own under: fragment
 * ids are per principal, so from then on the id also names a writer fragment, which the api scope may see.
 */
const CLAIMED = new Set<string>();
const GHOST = "ghost-fragment-id";

const tiers = (scope: keyof typeof S, protocol: "connect" | "grpc" = "connect") =>
  t.client(ContextTierService, PRINCIPAL[scope], S[scope].scopeId, protocol);

beforeAll(async () => {
  t = await startTestServer({ env: { ...ENV, ACMS_CONTEXT_MAX_TOKENS_HOT: "400" } });
  f = await buildFixture(t);
  S.api = await resolve(t, "writer", { projects: ["local/api"] });
  S.web = await resolve(t, "writer", { projects: ["local/web"] });
  S.both = await resolve(t, "writer", { projects: ["local/api", "local/web"] });
  S.noChild = await resolve(t, "writer", { projects: ["local/api"], excludeResources: ["child"] });
  S.secret = await resolve(t, "other", { projects: ["other/secret"] });
  S.readerApi = await resolve(t, "reader", { projects: ["local/api"] });
  const store = async (name: string, scope: keyof typeof S, projectName: string, tier: Tier, resourceId = "") => {
    const { fragment } = await tiers(scope).storeFragment({
      fragment: { content: `context ${name} of ${projectName}`, projectName, tier, resourceId },
    });
    F[name] = fragment!.fragmentId;
    OWNER[name] = scope;
  };
  await store("apiHot", "api", "local/api", Tier.HOT);
  await store("apiWarm", "api", "local/api", Tier.WARM);
  await store("apiCold", "api", "local/api", Tier.COLD);
  await store("apiChildHot", "api", "local/api", Tier.HOT, f.apiChild);
  await store("webHot", "web", "local/web", Tier.HOT);
  await store("webWarm", "web", "local/web", Tier.WARM);
  await store("webCold", "web", "local/web", Tier.COLD);
  await store("sharedHot", "web", "local/web", Tier.HOT, f.shared);
  await store("secretHot", "secret", "other/secret", Tier.HOT);
  await store("secretCold", "secret", "other/secret", Tier.COLD, f.secret);
}, 120_000);

afterEach(() => {
  expect(preventedLeaks.prevented).toBe(0);
});

afterAll(async () => {
  await t?.close(true);
});

/**
 * Which fragments each scope may see: its principal's, within its projects and resources. Fragment ids are
 * namespaced per principal, so the reader, which stores none, sees none of the writer's in the same project.
 */
function visibleIn(scope: keyof typeof S): string[] {
  const names: Record<keyof typeof S, string[]> = {
    api: ["apiHot", "apiWarm", "apiCold", "apiChildHot"],
    readerApi: [],
    noChild: ["apiHot", "apiWarm", "apiCold"],
    web: ["webHot", "webWarm", "webCold", "sharedHot"],
    both: ["apiHot", "apiWarm", "apiCold", "apiChildHot", "webHot", "webWarm", "webCold", "sharedHot"],
    secret: ["secretHot", "secretCold"],
  };
  return names[scope].map((n) => F[n]).sort();
}

/** Ids of the fixture's fragments `scope` may not see (less those its principal has since stored its own under). */
const hiddenFrom = (scope: keyof typeof S) => Object.values(F).filter((id) => !visibleIn(scope).includes(id) && !CLAIMED.has(id));

/** A fragment's identity across principals (ids are per principal): "principal id". */
const keyOf = (principal: string, id: string) => `${principal} ${id}`;
/** The identity of the fixture fragment `name`. */
const key = (name: string) => keyOf(PRINCIPAL[OWNER[name]], F[name]);

/** Where every fragment is, by keyOf(principal, id), as its owner sees it (reading a view does not touch the LRU order). */
async function placement(): Promise<Record<string, Tier>> {
  const out: Record<string, Tier> = {};
  for (const scope of ["both", "secret"] as const) {
    const { fragments } = await tiers(scope).getForActor({ role: Role.STRATEGIST });
    for (const fr of fragments) out[keyOf(PRINCIPAL[scope], fr.fragmentId)] = fr.tier;
  }
  return out;
}

const ids = (fs: readonly Fragment[]) => fs.map((x) => x.fragmentId).sort();
const shape = (msg: string) => msg.replace(/[0-9A-HJKMNP-TV-Z]{26}|ghost-fragment-id/gi, "<id>");

describe.each(["api", "noChild", "web", "secret", "readerApi"] as const)("tiers under scope %s", (scope) => {
  it("GetForActor shows exactly the scope's fragments, for every role, also when naming projects", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      const all = await tiers(scope, protocol).getForActor({ role: Role.STRATEGIST, includeFullContent: true });
      expect(ids(all.fragments)).toEqual(visibleIn(scope));
      for (const fr of all.fragments) expect(S[scope].projectNames).toContain(fr.projectName);
      const hot = await tiers(scope, protocol).getForActor({ role: Role.REVIEWER });
      for (const fr of hot.fragments) expect(visibleIn(scope)).toContain(fr.fragmentId);
      const named = await tiers(scope, protocol).getForActor({ role: Role.EXECUTOR, projectNames: [...S[scope].projectNames] });
      for (const fr of named.fragments) expect(visibleIn(scope)).toContain(fr.fragmentId);
    }
    for (const other of ["local/api", "local/web", "other/secret", "nobody/none"].filter((p) => !S[scope].projectNames.includes(p))) {
      const v = await expectViolation(tiers(scope).getForActor({ role: Role.STRATEGIST, projectNames: [other] }));
      expect([...v.projectNames]).toEqual([other]);
    }
  });

  it("GetFragment, PromoteFragment and DemoteFragment answer NOT_FOUND for hidden fragments, as for unknown ids, and move nothing", async () => {
    const before = await placement();
    for (const id of hiddenFrom(scope)) {
      for (const protocol of ["connect", "grpc"] as const) {
        const c = tiers(scope, protocol);
        const calls = [
          () => c.getFragment({ fragmentId: id }),
          () => c.promoteFragment({ fragmentId: id }),
          () => c.demoteFragment({ fragmentId: id }),
        ];
        const ghosts = [
          () => c.getFragment({ fragmentId: GHOST }),
          () => c.promoteFragment({ fragmentId: GHOST }),
          () => c.demoteFragment({ fragmentId: GHOST }),
        ];
        for (let i = 0; i < calls.length; i++) {
          const hidden = await expectCode(calls[i](), Code.NotFound);
          const ghost = await expectCode(ghosts[i](), Code.NotFound);
          expect(shape(hidden.rawMessage)).toBe(shape(ghost.rawMessage));
          expect(hidden.rawMessage).not.toContain("local/");
          expect(hidden.rawMessage).not.toContain("other/");
        }
      }
    }
    expect(await placement()).toEqual(before);
  });

  it("GetMetrics counts only the scope's fragments", async () => {
    const m = await tiers(scope).getMetrics({});
    const { fragments } = await tiers(scope).getForActor({ role: Role.STRATEGIST });
    const count = (tier: Tier) => BigInt(fragments.filter((x) => x.tier === tier).length);
    const tokens = (tier: Tier) => BigInt(fragments.filter((x) => x.tier === tier).reduce((s, x) => s + x.tokenCount, 0));
    expect([m.hotPopulation, m.warmPopulation, m.coldPopulation]).toEqual([count(Tier.HOT), count(Tier.WARM), count(Tier.COLD)]);
    expect([m.hotTokens, m.warmTokens, m.coldTokens]).toEqual([tokens(Tier.HOT), tokens(Tier.WARM), tokens(Tier.COLD)]);
  });

  it("StoreFragment refuses projects and resources outside the scope, existing or not", async () => {
    const c = tiers(scope);
    for (const projectName of ["local/api", "local/web", "other/secret", "nobody/none"].filter((p) => !S[scope].projectNames.includes(p))) {
      const v = await expectViolation(c.storeFragment({ fragment: { content: "intrusion", projectName } }));
      expect([...v.projectNames]).toEqual([projectName]);
    }
    const own = S[scope].projectNames[0];
    for (const resourceId of [f.apiRoot, f.apiChild, f.web, f.shared, f.secret, f.leaf, "01ARZ3NDEKTSV4RRFFQ69G5FAV"].filter(
      (r) => !S[scope].resourceIds.includes(r),
    )) {
      const v = await expectViolation(c.storeFragment({ fragment: { content: "intrusion", projectName: own, resourceId } }));
      expect([...v.resourceIds]).toEqual([resourceId]);
    }
    expect(await badFields(c.storeFragment({ fragment: { content: "no project", projectName: "" } }))).toEqual(["fragment.project_name"]);
  });
});

describe("tier writes never touch or name another tenant's fragments", () => {
  it("storing under a hidden fragment's id never overwrites, moves or describes it", async () => {
    const before = await placement();
    const outcomes: Record<string, string> = {};
    for (const name of Object.keys(F).filter((n) => hiddenFrom("api").includes(F[n]))) {
      const id = F[name];
      // Refusing or keeping the two apart are both safe; overwriting is not. Today: the same principal's own
      // fragment outside the scope is ALREADY_EXISTS, another principal's id is free (ids are per principal).
      const err = await tiers("api")
        .storeFragment({ fragment: { fragmentId: id, content: "overwrite", projectName: "local/api" } })
        .then(
          () => undefined,
          (e: unknown) => e as { code: Code; rawMessage: string },
        );
      outcomes[name] = err ? Code[err.code] : "OK";
      if (err) {
        expect([Code[Code.AlreadyExists], Code[Code.PermissionDenied], Code[Code.NotFound]]).toContain(Code[err.code]);
        expect(err.rawMessage).not.toContain("local/web");
        expect(err.rawMessage).not.toContain("other/secret");
      } else {
        // Kept apart: the stored fragment is the caller's own, under the same id.
        CLAIMED.add(id);
        const { fragment } = await tiers("api").getFragment({ fragmentId: id });
        expect([fragment!.content, fragment!.projectName]).toEqual(["overwrite", "local/api"]);
      }
    }
    expect(outcomes).toEqual({
      webHot: "AlreadyExists",
      webWarm: "AlreadyExists",
      webCold: "AlreadyExists",
      sharedHot: "AlreadyExists",
      secretHot: "OK",
      secretCold: "OK",
    });
    const after = await placement();
    for (const [k, tier] of Object.entries(before)) expect({ k, tier: after[k] }).toEqual({ k, tier });
    const { fragment } = await tiers("secret").getFragment({ fragmentId: F.secretHot });
    expect(fragment!.content).toBe("context secretHot of other/secret");
    const { fragment: cold } = await tiers("secret").getFragment({ fragmentId: F.secretCold });
    expect(cold!.content).toBe("context secretCold of other/secret");
  });

  it("a client-chosen fragment id another tenant already uses neither blocks nor reveals anything", async () => {
    // Fragment ids are free-form ("plan-1"), so they are guessable: whether another tenant holds one must not
    // change the answer a scope gets (GetFragment already answers NOT_FOUND for the same reason).
    await tiers("secret").storeFragment({ fragment: { fragmentId: "plan-1", content: "other tenant plan", projectName: "other/secret" } });
    const outcome = (p: Promise<unknown>) =>
      p.then(
        () => "OK",
        (e: unknown) => Code[(e as { code: Code }).code],
      );
    const taken = await outcome(
      tiers("api").storeFragment({ fragment: { fragmentId: "plan-1", content: "my plan", projectName: "local/api" } }),
    );
    const fresh = await outcome(
      tiers("api").storeFragment({ fragment: { fragmentId: "plan-2", content: "my plan", projectName: "local/api" } }),
    );
    expect(taken).toBe(fresh);
    const { fragment } = await tiers("secret").getFragment({ fragmentId: "plan-1" });
    expect(fragment!.content).toBe("other tenant plan");
  });

  it("two principals over the same project keep separate fragment namespaces in every operation", async () => {
    // admin may scope local/api like the writer: the project is shared, the fragments are not.
    const admin = await resolve(t, "admin", { projects: ["local/api"] });
    const a = t.client(ContextTierService, "admin", admin.scopeId);
    const before = await placement();
    expect((await a.getForActor({ role: Role.STRATEGIST, includeFullContent: true })).fragments).toEqual([]);
    expect((await a.getMetrics({})).hotPopulation).toBe(0n);
    for (const id of [F.apiHot, F.apiWarm, F.apiCold]) await expectCode(a.getFragment({ fragmentId: id }), Code.NotFound);
    const { fragment } = await a.storeFragment({
      fragment: { fragmentId: F.apiWarm, content: "admin note", projectName: "local/api", tier: Tier.COLD },
    });
    expect([fragment!.fragmentId, fragment!.tier]).toEqual([F.apiWarm, Tier.COLD]);
    expect((await a.evictLru({ tier: Tier.WARM, count: 100 })).fragmentIds).toEqual([]);
    expect(ids((await a.getForActor({ role: Role.STRATEGIST })).fragments)).toEqual([F.apiWarm]);
    expect((await a.getMetrics({})).coldPopulation).toBe(1n);
    expect(await placement()).toEqual(before);
    const { fragment: writers } = await tiers("api").getFragment({ fragmentId: F.apiWarm });
    expect(writers!.content).toBe("context apiWarm of local/api");
    expect((await a.evictLru({ tier: Tier.COLD, count: 100 })).fragmentIds).toEqual([F.apiWarm]);
    expect((await tiers("api").getFragment({ fragmentId: F.apiWarm })).fragment!.content).toBe("context apiWarm of local/api");
  });

  it("displacement caused by one tenant names only fragments that tenant sees", async () => {
    // Fill hot well past its budget from the api scope: the LRU hot fragments of every tenant move down.
    const displacedIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { displaced } = await tiers("api").storeFragment({
        fragment: { content: `filler ${i} ${"word ".repeat(100)}`, projectName: "local/api", tier: Tier.HOT },
      });
      displacedIds.push(...displaced.map((d) => d.fragmentId));
    }
    const visible = new Set((await tiers("api").getForActor({ role: Role.STRATEGIST })).fragments.map((x) => x.fragmentId));
    for (const id of displacedIds) expect(hiddenFrom("api")).not.toContain(id);
    for (const id of displacedIds) if (!visible.has(id)) expect(Object.values(F)).not.toContain(id);
    // The other tenants' fragments still exist (moved down at most), none lost to another tenant's call.
    const after = await placement();
    for (const name of ["webHot", "webWarm", "webCold", "sharedHot", "secretHot", "secretCold"]) expect(after[key(name)]).toBeDefined();
  });

  it("EvictLru evicts only the scope's fragments, from every tier", async () => {
    const before = await placement();
    const evicted: string[] = [];
    for (const tier of [Tier.HOT, Tier.WARM, Tier.COLD]) {
      for (const protocol of ["connect", "grpc"] as const) {
        const { fragmentIds } = await tiers("noChild", protocol).evictLru({ tier, count: 1000 });
        evicted.push(...fragmentIds);
      }
    }
    const api = new Set((await tiers("api").getForActor({ role: Role.STRATEGIST })).fragments.map((x) => x.fragmentId));
    // Evicted ids are the writer's (the noChild scope's principal); none of them may be outside the scope.
    const others = ["webHot", "webWarm", "webCold", "sharedHot", "secretHot", "secretCold", "apiChildHot"].map(key);
    for (const id of evicted) expect(others).not.toContain(keyOf("writer", id));
    const after = await placement();
    for (const k of others) expect({ k, tier: after[k] }).toEqual({ k, tier: before[k] });
    for (const id of evicted) expect(api.has(id) || after[keyOf("writer", id)] === undefined).toBe(true);
    expect(await badFields(tiers("api").evictLru({ tier: Tier.UNSPECIFIED, count: 1 }))).toEqual(["tier"]);
  });
});
