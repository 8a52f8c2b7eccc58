import { loadConfig } from "../../src/server/composition/config.js";

describe("tier budgets from the environment", () => {
  test("default to 8000 hot tokens, 500 warm and 5000 cold fragments", () => {
    expect(loadConfig({}).tiers).toMatchObject({ maxTokensHot: 8000, maxDecisionsWarm: 500, maxDecisionsCold: 5000 });
  });

  test("are read from ACMS_CONTEXT_* and refused at start when not positive integers", () => {
    const env = {
      ACMS_CONTEXT_MAX_TOKENS_HOT: "123",
      ACMS_CONTEXT_MAX_DECISIONS_WARM: "4",
      ACMS_CONTEXT_MAX_DECISIONS_COLD: "5",
      ACMS_CONTEXT_SUMMARY_TOKENS: "32",
    };
    expect(loadConfig(env).tiers).toEqual({ maxTokensHot: 123, maxDecisionsWarm: 4, maxDecisionsCold: 5, summaryTokens: 32 });
    expect(() => loadConfig({ ACMS_CONTEXT_MAX_TOKENS_HOT: "0" })).toThrow(/ACMS_CONTEXT_MAX_TOKENS_HOT/);
    expect(() => loadConfig({ ACMS_CONTEXT_MAX_DECISIONS_WARM: "lots" })).toThrow(/ACMS_CONTEXT_MAX_DECISIONS_WARM/);
    expect(() => loadConfig({ ACMS_CONTEXT_MAX_DECISIONS_COLD: "-1" })).toThrow(/ACMS_CONTEXT_MAX_DECISIONS_COLD/);
  });
});
