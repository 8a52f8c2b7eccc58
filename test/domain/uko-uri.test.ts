import { InvalidArgumentError } from "../../src/domain/errors.js";
import { formatUkoUri, graphIri, parseUkoUri, resourceIdOfGraphIri } from "../../src/domain/uko-uri.js";

const RID = "01JABCDEFGHJKMNPQRSTVWXYZ0";

describe("UKO URIs", () => {
  it("round-trips documents and chunks", () => {
    expect(parseUkoUri(formatUkoUri(RID, "docs/a.md"), "f")).toEqual({ resourceId: RID, path: "docs/a.md", chunkIndex: undefined });
    expect(parseUkoUri(formatUkoUri(RID, "docs/a.md", 12), "f")).toEqual({ resourceId: RID, path: "docs/a.md", chunkIndex: 12 });
  });

  it.each([
    ["http://x/y", "uko://"],
    [`uko://${RID}`, "missing path"],
    ["uko://not-a-ulid/a.md", "ULID"],
    [`uko://${RID}/`, "empty"],
    [`uko://${RID}/../other/a.md`, "'..'"],
    [`uko://${RID}/a/./b`, "'.'"],
    [`uko://${RID}//etc/passwd`, "absolute"],
    [`uko://${RID}/a//b`, "empty segment"],
    [`uko://${RID}/a.md#-1`, "chunk index"],
    [`uko://${RID}/a.md#01`, "chunk index"],
    [`uko://${RID}/a.md#x`, "chunk index"],
    [`uko://${RID}/a#b.md#1`, "'#'"],
  ])("rejects %s", (uri, why) => {
    let caught: unknown;
    try {
      parseUkoUri(uri, "uko_uris[3]");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidArgumentError);
    const v = (caught as InvalidArgumentError).violations[0];
    expect(v.field).toBe("uko_uris[3]");
    expect(v.description).toContain(why);
  });

  it("maps named graphs to resources and back", () => {
    expect(graphIri(RID)).toBe(`uko://${RID}/`);
    expect(resourceIdOfGraphIri(graphIri(RID))).toBe(RID);
    expect(resourceIdOfGraphIri(`uko://${RID}/a`)).toBeUndefined();
    expect(resourceIdOfGraphIri("uko://lower-case/")).toBeUndefined();
  });
});
