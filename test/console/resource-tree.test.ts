import { resourceTree, type TreeResource } from "../../console/src/resource-tree.js";

const r = (id: string, parentIds: string[] = [], alias = id): TreeResource => ({ id, alias, kind: "repo", parentIds });
const drawn = (rows: ReturnType<typeof resourceTree>) =>
  rows.map((row) => `${"  ".repeat(row.depth)}${row.resource.alias}${row.repeated ? "*" : ""}`);

describe("resourceTree (the console's DAG drawing)", () => {
  test("children under their parents by alias; a shared child is expanded once and marked where repeated", () => {
    const rows = resourceTree([r("leaf", ["b", "a"]), r("b", ["root"]), r("a", ["root"]), r("root"), r("deep", ["leaf"])]);
    expect(drawn(rows)).toEqual(["root", "  a", "    leaf", "      deep", "  b", "    leaf*"]);
  });

  test("parents outside the list make a root; a self-parent is ignored", () => {
    expect(drawn(resourceTree([r("x", ["elsewhere"]), r("y", ["y"])]))).toEqual(["x", "y"]);
  });

  test("a cycle with no root above it is still drawn, once, without looping", () => {
    const rows = resourceTree([r("p", ["q"]), r("q", ["p"]), r("top")]);
    expect(drawn(rows)).toEqual(["top", "p", "  q", "    p*"]);
  });

  test("rows grow with the edges, not the paths: a ladder of 30 shared levels stays small", () => {
    const list: TreeResource[] = [r("l0a"), r("l0b")];
    for (let i = 1; i < 30; i += 1) for (const side of ["a", "b"]) list.push(r(`l${i}${side}`, [`l${i - 1}a`, `l${i - 1}b`]));
    const rows = resourceTree(list);
    expect(new Set(rows.filter((row) => !row.repeated).map((row) => row.resource.id)).size).toBe(list.length);
    expect(rows.length).toBeLessThanOrEqual(2 * list.length);
  });
});
