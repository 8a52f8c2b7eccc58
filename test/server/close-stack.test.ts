import { CloseStack } from "../../src/server/composition/close-stack.js";

describe("CloseStack", () => {
  it("closes the last pushed first, every one even after a failure, then throws the first failure; once", async () => {
    const closed: string[] = [];
    const opened = new CloseStack();
    expect(opened.push("lock", (r) => closed.push(r))).toBe("lock");
    opened.push("db", async (r) => {
      closed.push(r);
      throw new Error("db close failed");
    });
    opened.push("tiers", (r) => {
      closed.push(r);
      throw new Error("tiers close failed");
    });
    opened.push("graph", async (r) => closed.push(r));
    await expect(opened.closeAll()).rejects.toThrow("tiers close failed");
    expect(closed).toEqual(["graph", "tiers", "db", "lock"]);
    await opened.closeAll();
    expect(closed).toHaveLength(4);
  });
});
