import { assertProjectName, isProjectName } from "../../src/domain/project-name.js";

describe("project names", () => {
  it.each(["local/api", "a/b", "ns-1/my.proj_2", "0/0"])("accepts %s", (n) => expect(isProjectName(n)).toBe(true));
  it.each(["", "local", "local/", "/api", "Local/api", "local/api/x", "local/-api", "local/a pi", "../x", `a/${"b".repeat(300)}`])(
    "rejects %j",
    (n) => expect(isProjectName(n)).toBe(false),
  );
  it("names the field", () => {
    expect(() => assertProjectName("projects[2]", "Bad")).toThrow(/projects\[2\]/);
  });
});
