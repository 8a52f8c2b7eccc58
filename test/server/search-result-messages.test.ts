import fc from "fast-check";
import { create, toBinary } from "@bufbuild/protobuf";
import { SearchResponseSchema, TextResultSchema } from "../../gen/acms/v1/text_pb.js";
import { SimilaritySearchResponseSchema, VectorResultSchema } from "../../gen/acms/v1/vector_pb.js";
import { textResultOf } from "../../src/server/routes/text-routes.js";
import { vectorResultOf } from "../../src/server/routes/vector-routes.js";

const text = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: "binary", maxLength: 30 }));
const record = fc.record({
  ukoUri: text,
  resourceId: text,
  path: text,
  content: text,
  score: fc.double(),
  metadata: fc.dictionary(fc.oneof(text, fc.constantFrom("10", "2", "constructor", "toString")), text, { maxKeys: 5 }),
});

describe("search results written out as messages", () => {
  it.each([
    ["TextResult", textResultOf, TextResultSchema, SearchResponseSchema],
    ["VectorResult", vectorResultOf, VectorResultSchema, SimilaritySearchResponseSchema],
  ] as const)("%s: the message create() makes", (_name, of, schema, answer) => {
    fc.assert(
      fc.property(record, (r) => {
        const ours = of(r);
        expect(ours).toStrictEqual(create(schema, r));
        expect(toBinary(schema as never, ours as never)).toEqual(toBinary(schema as never, create(schema, r) as never));
        expect(toBinary(answer as never, create(answer, { results: [ours] } as never) as never)).toEqual(
          toBinary(answer as never, create(answer, { results: [r] } as never) as never),
        );
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ["TextResult", TextResultSchema, textResultOf],
    ["VectorResult", VectorResultSchema, vectorResultOf],
  ] as const)("%s: every field of the message is written (the protos and the writer agree)", (_name, schema, of) => {
    const ours = of({ ukoUri: "u", resourceId: "r", path: "p", content: "c", score: 0.5, metadata: { k: "v" } });
    expect(
      Object.keys(ours)
        .filter((k) => k !== "$typeName")
        .sort(),
    ).toEqual(schema.fields.map((f) => f.localName).sort());
  });
});
