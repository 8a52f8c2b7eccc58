import { formatTable, snippet, truncate } from "../../src/cli/format-table.js";

test("formatTable aligns columns and cuts the last one to the width", () => {
  const out = formatTable(
    ["RANK", "URI", "SNIPPET"],
    [
      ["1", "uko://a/x.md", "y".repeat(100)],
      ["10", "uko://a/long-name.md", "short"],
    ],
    60,
  );
  const lines = out.trimEnd().split("\n");
  expect(lines[0]).toBe("RANK  URI                   SNIPPET");
  expect(lines[1]).toMatch(/^1     uko:\/\/a\/x\.md          y+…$/);
  expect(lines[1].length).toBe(60);
  expect(lines[2]).toBe("10    uko://a/long-name.md  short");
});

test("snippet shows the window with the most query words, matched at word starts", () => {
  const text = `${"filler words here. ".repeat(10)}Keys are configured in a file and only their SHA-256 is stored. ${"tail text. ".repeat(10)}`;
  const s = snippet(text, "how are keys stored", 70);
  expect(s.startsWith("…")).toBe(true);
  expect(s).toContain("Keys are configured");
  expect(s.length).toBeLessThanOrEqual(70);
  // "are" inside "aware" is not a match at a word start.
  expect(snippet(`${"aware ".repeat(30)}we are here`, "are", 30)).toContain("we are here");
  expect(snippet("a\n\n  short   text", "nothing")).toBe("a short text");
  expect(truncate("abcdef", 4)).toBe("abc…");
});
