import { create } from "@bufbuild/protobuf";
import { RefKind } from "../../gen/acms/v1/options_pb.js";
import { FetchContentRequestSchema } from "../../gen/acms/v1/rag_pb.js";
import { UpsertDocumentsRequestSchema } from "../../gen/acms/v1/index_pb.js";
import { StoreFragmentRequestSchema, GetForActorRequestSchema } from "../../gen/acms/v1/tiers_pb.js";
import { ResolveScopeRequestSchema } from "../../gen/acms/v1/scope_pb.js";
import { SearchRequestSchema } from "../../gen/acms/v1/text_pb.js";
import { collectRefs } from "../../src/server/access/request-refs.js";

describe("collectRefs", () => {
  it("finds singular, repeated and nested marked fields with their paths", () => {
    const store = create(StoreFragmentRequestSchema, { fragment: { projectName: "local/api", resourceId: "R1", content: "x" } });
    expect(collectRefs(StoreFragmentRequestSchema, store)).toEqual([
      { kind: RefKind.RESOURCE_ID, field: "fragment.resource_id", value: "R1" },
      { kind: RefKind.PROJECT, field: "fragment.project_name", value: "local/api" },
    ]);
    const fetch = create(FetchContentRequestSchema, { ukoUris: ["uko://a/b", "uko://c/d"] });
    expect(collectRefs(FetchContentRequestSchema, fetch).map((r) => r.field)).toEqual(["uko_uris[0]", "uko_uris[1]"]);
    const actor = create(GetForActorRequestSchema, { projectNames: ["a/b"] });
    expect(collectRefs(GetForActorRequestSchema, actor)).toEqual([{ kind: RefKind.PROJECT, field: "project_names[0]", value: "a/b" }]);
  });

  it("skips empty singular values (an absent optional reference names nothing)", () => {
    const store = create(StoreFragmentRequestSchema, { fragment: { projectName: "", content: "x" } });
    expect(collectRefs(StoreFragmentRequestSchema, store)).toEqual([]);
    expect(collectRefs(StoreFragmentRequestSchema, create(StoreFragmentRequestSchema))).toEqual([]);
  });

  it("keeps empty repeated values so they get checked (and refused)", () => {
    const req = create(ResolveScopeRequestSchema, { projects: ["local/api", ""] });
    expect(collectRefs(ResolveScopeRequestSchema, req).map((r) => r.value)).toEqual(["local/api", ""]);
  });

  it("finds the resource of each client-stream message", () => {
    const msg = create(UpsertDocumentsRequestSchema, { resourceId: "R9", documents: [{ path: "a" }] });
    expect(collectRefs(UpsertDocumentsRequestSchema, msg)).toEqual([{ kind: RefKind.RESOURCE_ID, field: "resource_id", value: "R9" }]);
  });

  it("answers nothing for messages without marked fields", () => {
    expect(collectRefs(SearchRequestSchema, create(SearchRequestSchema, { query: "uko://x/y" }))).toEqual([]);
  });
});
