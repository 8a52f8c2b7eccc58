import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Code } from "@connectrpc/connect";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { generateKey, hashKey, readKeysFile } from "../../src/application/access/key-ring.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { CONTRACT_ENV, expectCode, expectViolation, startContractServer } from "./contract-fixture.js";

describe("Operating", () => {
  test("environment defaults: ACMS_HOST 127.0.0.1, ACMS_PORT 50051, ACMS_DATA_DIR ./.acms, tier budgets 8000/500/5000", () => {
    const c = loadConfig({});
    expect(c.host).toBe("127.0.0.1");
    expect(c.port).toBe(50051);
    expect(c.dataDir).toBe(resolve("./.acms"));
    expect(c.keysFile).toBeUndefined();
    expect(c.maxResultsCap).toBe(1000);
    expect([c.tiers.maxTokensHot, c.tiers.maxDecisionsWarm, c.tiers.maxDecisionsCold]).toEqual([8000, 500, 5000]);
  });

  test("every documented variable is read: ACMS_HOST, ACMS_PORT, ACMS_DATA_DIR, ACMS_KEYS_FILE, ACMS_EMBEDDING_DIM and the budgets", () => {
    const c = loadConfig({
      ACMS_HOST: "0.0.0.0",
      ACMS_PORT: "7000",
      ACMS_DATA_DIR: "/tmp/acms-x",
      ACMS_KEYS_FILE: "/etc/acms/keys.json",
      ACMS_EMBEDDING_DIM: "768",
      ACMS_CONTEXT_MAX_TOKENS_HOT: "100",
      ACMS_CONTEXT_MAX_DECISIONS_WARM: "3",
      ACMS_CONTEXT_MAX_DECISIONS_COLD: "4",
    });
    expect([c.host, c.port, c.dataDir, c.keysFile, c.embeddingDim]).toEqual(["0.0.0.0", 7000, "/tmp/acms-x", "/etc/acms/keys.json", 768]);
    expect([c.tiers.maxTokensHot, c.tiers.maxDecisionsWarm, c.tiers.maxDecisionsCold]).toEqual([100, 3, 4]);
  });

  test("bad values are refused at start with a message naming the variable", () => {
    expect(() => loadConfig({ ACMS_PORT: "http" })).toThrow(/ACMS_PORT/);
    expect(() => loadConfig({ ACMS_EMBEDDING_DIM: "0" })).toThrow(/ACMS_EMBEDDING_DIM/);
    expect(() => loadConfig({ ACMS_CONTEXT_MAX_TOKENS_HOT: "-1" })).toThrow(/ACMS_CONTEXT_MAX_TOKENS_HOT/);
  });

  describe("the keys file", () => {
    let dir: string;
    let t: TestServer;
    const keys = { agent: generateKey(), ops: generateKey() };
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "acms-keys-"));
      const file = join(dir, "keys.json");
      writeFileSync(
        file,
        JSON.stringify([
          { name: "agent-a", key_sha256: hashKey(keys.agent), projects: ["local/*"], write: false },
          { name: "ops", key_sha256: hashKey(keys.ops), projects: ["local/*", "team/api"], write: true },
        ]),
      );
      const entries = readKeysFile(file);
      t = await startTestServer({ env: CONTRACT_ENV, keyEntries: entries, keys: { agent: keys.agent, ops: keys.ops } });
    });
    afterAll(async () => {
      await t.close(true);
      rmSync(dir, { recursive: true, force: true });
    });

    test("is the documented JSON: name, key_sha256 (hex sha256 of the key), projects (globs), write", () => {
      expect(readKeysFile(join(dir, "keys.json")).map((e) => [e.name, e.projects, e.write])).toEqual([
        ["agent-a", ["local/*"], false],
        ["ops", ["local/*", "team/api"], true],
      ]);
    });

    test("write allows RegistryService and IndexService on the key's projects; write: false does not", async () => {
      await t.client(RegistryService, "ops").createProject({ name: "local/api" });
      await t.client(RegistryService, "ops").createProject({ name: "team/api" });
      await expectCode(t.client(RegistryService, "agent").createProject({ name: "local/other" }), Code.PermissionDenied);
      await expectViolation(t.client(RegistryService, "ops").createProject({ name: "team/web" }));
    });

    test("projects are globs over project names: a key sees only what they match", async () => {
      const agent = (await t.client(RegistryService, "agent").listProjects({})).projects.map((p) => p.name);
      expect(agent).toEqual(["local/api"]);
      await expectViolation(t.client(ScopeService, "agent").resolveScope({ projects: ["team/api"] }));
      const { scope } = await t.client(ScopeService, "agent").resolveScope({ projects: ["local/api"] });
      expect(scope!.projectNames).toEqual(["local/api"]);
    });
  });
});

describe("ContextTierService budgets (ACMS_CONTEXT_MAX_*)", () => {
  let t: TestServer;
  let scopeId: string;
  beforeAll(async () => {
    t = await startContractServer({
      ACMS_CONTEXT_MAX_TOKENS_HOT: "40",
      ACMS_CONTEXT_MAX_DECISIONS_WARM: "2",
      ACMS_CONTEXT_MAX_DECISIONS_COLD: "2",
    });
    await t.client(RegistryService, "writer").createProject({ name: "local/api" });
    scopeId = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
  });
  afterAll(async () => {
    await t.close(true);
  });

  test("ACMS_CONTEXT_MAX_DECISIONS_WARM bounds the warm tier: a store over it displaces the least recently used", async () => {
    const tiers = t.client(ContextTierService, "writer", scopeId);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++)
      ids.push(
        (await tiers.storeFragment({ fragment: { content: `warm ${i}`, tier: Tier.WARM, projectName: "local/api" } })).fragment!.fragmentId,
      );
    const third = await tiers.storeFragment({ fragment: { content: "warm 2", tier: Tier.WARM, projectName: "local/api" } });
    expect(third.displaced.map((d) => [d.fragmentId, d.fromTier])).toEqual([[ids[0], Tier.WARM]]);
    expect((await tiers.getMetrics({})).warmPopulation).toBe(2n);
  });

  test("ACMS_CONTEXT_MAX_DECISIONS_COLD bounds the cold tier", async () => {
    const tiers = t.client(ContextTierService, "writer", scopeId);
    for (let i = 0; i < 4; i++)
      await tiers.storeFragment({ fragment: { content: `cold ${i}`, tier: Tier.COLD, projectName: "local/api" } });
    expect((await tiers.getMetrics({})).coldPopulation).toBeLessThanOrEqual(2n);
  });

  test("ACMS_CONTEXT_MAX_TOKENS_HOT bounds the hot tier's tokens", async () => {
    const tiers = t.client(ContextTierService, "writer", scopeId);
    for (let i = 0; i < 6; i++) {
      await tiers.storeFragment({
        fragment: { content: `hot fragment number ${i} with a handful of words`, tier: Tier.HOT, projectName: "local/api" },
      });
    }
    const m = await tiers.getMetrics({});
    expect(m.hotTokens).toBeLessThanOrEqual(40n);
    expect(m.hotPopulation).toBeGreaterThan(0n);
  });
});
