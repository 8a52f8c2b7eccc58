import { generateKey, hashKey, KeyRing, parseKeyEntries } from "../../src/application/access/key-ring.js";
import { isLoopback, loadConfig } from "../../src/server/composition/config.js";

describe("key ring", () => {
  it("authenticates by hash only", () => {
    const key = generateKey();
    const ring = new KeyRing([{ name: "a", key_sha256: hashKey(key), projects: ["local/*"], write: true }]);
    const p = ring.authenticate(key);
    expect(p?.name).toBe("a");
    expect(p?.allowsProject("local/api")).toBe(true);
    expect(p?.allowsProject("other/api")).toBe(false);
    expect(ring.authenticate(key + "x")).toBeUndefined();
    expect(key).toMatch(/^acms_[A-Za-z0-9_-]{43}$/);
  });

  it("hashes a key to the hex SHA-256 of its UTF-8 bytes, as the keys file stores it", () => {
    expect(hashKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hashKey("acms_\u00e9")).toBe("b17884077b433c2ee3e7f52b738986a21a3f5bccd45f202c1f17723c382fc3f3");
  });

  it("validates the keys file", () => {
    const ok = { name: "a", key_sha256: "a".repeat(64), projects: ["local/*"], write: false };
    expect(parseKeyEntries([ok], "k.json")).toHaveLength(1);
    expect(() => parseKeyEntries({}, "k.json")).toThrow(/array/);
    expect(() => parseKeyEntries([{ ...ok, key_sha256: "zz" }], "k.json")).toThrow(/key_sha256/);
    expect(() => parseKeyEntries([ok, ok], "k.json")).toThrow(/duplicate/);
    expect(() => parseKeyEntries([{ ...ok, projects: "local/*" }], "k.json")).toThrow(/projects/);
    expect(() => parseKeyEntries([{ ...ok, write: "yes" }], "k.json")).toThrow(/write/);
  });
});

describe("config", () => {
  it("has the documented defaults", () => {
    const c = loadConfig({});
    expect(c.host).toBe("127.0.0.1");
    expect(c.port).toBe(50051);
    expect(c.dataDir.endsWith(".acms")).toBe(true);
    expect(c.tiers).toMatchObject({ maxTokensHot: 8000, maxDecisionsWarm: 500, maxDecisionsCold: 5000 });
    expect(c.maxResultsCap).toBe(1000);
  });

  it("refuses bad numbers with the variable's name", () => {
    expect(() => loadConfig({ ACMS_PORT: "http" })).toThrow(/ACMS_PORT/);
    expect(() => loadConfig({ ACMS_CONTEXT_MAX_TOKENS_HOT: "0" })).toThrow(/ACMS_CONTEXT_MAX_TOKENS_HOT/);
    expect(() => loadConfig({ ACMS_EMBEDDING_DIM: "-4" })).toThrow(/ACMS_EMBEDDING_DIM/);
  });

  it("knows loopback", () => {
    expect(isLoopback("127.0.0.1")).toBe(true);
    expect(isLoopback("::1")).toBe(true);
    expect(isLoopback("0.0.0.0")).toBe(false);
  });
});
