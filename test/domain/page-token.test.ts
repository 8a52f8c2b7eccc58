import { InvalidArgumentError } from "../../src/domain/errors.js";
import { decodePageToken, DEFAULT_PAGE_SIZE, encodePageToken, MAX_PAGE_SIZE, pageSizeOf } from "../../src/domain/page-token.js";

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return (err as InvalidArgumentError).violations.map((v) => v.field).join(",");
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("page size", () => {
  test("absent is the default; present it must be 1..MAX_PAGE_SIZE", () => {
    expect(pageSizeOf(undefined)).toBe(DEFAULT_PAGE_SIZE);
    expect(pageSizeOf(1)).toBe(1);
    expect(pageSizeOf(MAX_PAGE_SIZE)).toBe(MAX_PAGE_SIZE);
    for (const bad of [0, -1, MAX_PAGE_SIZE + 1, 1.5, Number.NaN]) expect(fieldOf(() => pageSizeOf(bad))).toBe("page_size");
  });
});

describe("page tokens", () => {
  test("round-trip the position of their own listing, and are URL-safe", () => {
    const t = encodePageToken("resources", "docs", "local/api");
    expect(t).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodePageToken(t, "resources", "local/api")).toBe("docs");
    expect(decodePageToken("", "resources", "local/api")).toBeUndefined();
  });

  test("another listing's token, another project's, and anything not ours are refused on page_token", () => {
    const t = encodePageToken("resources", "docs", "local/api");
    expect(fieldOf(() => decodePageToken(t, "resources", "local/web"))).toBe("page_token");
    expect(fieldOf(() => decodePageToken(t, "projects"))).toBe("page_token");
    const forged = (body: unknown) => Buffer.from(JSON.stringify(body)).toString("base64url");
    for (const bad of [
      "not a token",
      "%%",
      "x".repeat(2000),
      forged({ v: 2, l: "projects", k: "a/b", o: "" }),
      forged({ v: 1, l: "projects", k: "", o: "" }),
      forged({ v: 1, l: "projects", k: 7, o: "" }),
      forged({ v: 1, l: "projects", k: "a\u0000b", o: "" }),
      forged(null),
      forged([1]),
    ]) {
      expect(fieldOf(() => decodePageToken(bad, "projects"))).toBe("page_token");
    }
    // The position's shape is the listing's to check.
    expect(fieldOf(() => decodePageToken(encodePageToken("scopes", "../x"), "scopes", "", (k) => /^[0-9A-Z]{26}$/.test(k)))).toBe(
      "page_token",
    );
  });
});
