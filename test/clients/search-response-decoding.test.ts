import fc from "fast-check";
import { create, fromBinary, toBinary, type DescMessage } from "@bufbuild/protobuf";
import { SearchResponseSchema, TextResultSchema } from "../../gen/acms/v1/text_pb.js";
import { SimilaritySearchResponseSchema, VectorResultSchema } from "../../gen/acms/v1/vector_pb.js";
import { HealthCheckResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { decodeSearchResponse, SEARCH_RESPONSE_RESULT_TYPES } from "../../clients/typescript/src/search-response-decoding.js";

const text = fc.oneof(
  fc.constant(""),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\ufeff", " "), maxLength: 200 }),
  fc.string({ minLength: 2000, maxLength: 6000 }),
);
const score = fc.oneof(fc.constant(0), fc.constant(-0), fc.constant(NaN), fc.double());
const metadata = fc.dictionary(fc.oneof(text, fc.constantFrom("10", "2", "0", "a", "__proto__", "constructor")), text, { maxKeys: 5 });
const result = fc.record({ ukoUri: text, content: text, score, metadata, resourceId: text, path: text });
const answer = fc.record({
  results: fc.array(result, { maxLength: 30 }),
  scopeId: text,
  exhaustive: fc.boolean(),
  indexGeneration: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })),
});
const SCHEMAS = [
  [SearchResponseSchema, TextResultSchema],
  [SimilaritySearchResponseSchema, VectorResultSchema],
] as const;

function encoded(schema: DescMessage, resultSchema: DescMessage, a: { results: object[]; scopeId?: string }): Uint8Array {
  return toBinary(schema, create(schema, { ...a, results: a.results.map((r) => create(resultSchema, r as never)) } as never));
}

/** What fromBinary makes of `bytes`, or the error it raises. */
function reference(schema: DescMessage, bytes: Uint8Array): unknown {
  try {
    return fromBinary(schema, bytes);
  } catch (err) {
    return err;
  }
}

describe("the SDK's reader of search answers", () => {
  it("reads the keyword and vector answers into the messages fromBinary makes", () => {
    for (const [schema, resultSchema] of SCHEMAS) {
      fc.assert(
        fc.property(answer, (a) => {
          const bytes = encoded(schema, resultSchema, a);
          const mine = decodeSearchResponse(schema, Buffer.from(bytes));
          const theirs = fromBinary(schema, bytes);
          // Every string here is valid UTF-8 without U+FFFD, so this reader takes every one of them.
          expect(mine).toBeDefined();
          expect(mine).toStrictEqual(theirs);
          expect(Object.keys(mine!)).toEqual(Object.keys(theirs));
          const results = (mine as unknown as { results: object[] }).results;
          for (const [i, r] of results.entries())
            expect(Object.keys(r)).toEqual(Object.keys((theirs as unknown as { results: object[] }).results[i]));
        }),
        { numRuns: 200 },
      );
    }
  });

  it("reads from a Uint8Array view into a larger buffer as well as from a Buffer", () => {
    const bytes = encoded(SearchResponseSchema, TextResultSchema, {
      results: [{ ukoUri: "u", content: "c é", score: 0.5, metadata: { k: "v" }, resourceId: "r", path: "p" }],
    });
    const big = new Uint8Array(bytes.length + 20);
    big.set(bytes, 7);
    expect(decodeSearchResponse(SearchResponseSchema, big.subarray(7, 7 + bytes.length))).toStrictEqual(
      fromBinary(SearchResponseSchema, bytes),
    );
  });

  it("leaves to fromBinary what it does not read, and fromBinary then reads or refuses it", () => {
    const good = encoded(SearchResponseSchema, TextResultSchema, {
      results: [{ ukoUri: "u", content: "hello", score: 0.25, metadata: { a: "b" }, resourceId: "r", path: "p" }],
      scopeId: "s",
    });
    const cases: Array<[string, Uint8Array]> = [
      // An unknown field at the top and inside a result: fromBinary keeps them in $unknown.
      ["unknown field", Buffer.concat([good, Buffer.from([0x28, 0x01])])],
      ["unknown field in a result", Buffer.from([0x0a, 0x05, 0x0a, 0x01, 0x75, 0x38, 0x01])],
      ["unknown field in a map entry", Buffer.from([0x0a, 0x07, 0x22, 0x05, 0x0a, 0x01, 0x6b, 0x18, 0x01])],
      // Wire types other than the fields' own.
      ["score as a varint", Buffer.from([0x0a, 0x02, 0x18, 0x01])],
      // Cut short: inside a string, inside a result, inside a double, inside a varint.
      ["cut string", good.subarray(0, 6)],
      ["cut result", good.subarray(0, good.length - 4)],
      ["cut double", Buffer.from([0x0a, 0x05, 0x19, 0, 0, 0, 0])],
      ["cut varint", Buffer.from([0x20, 0x80])],
      // Not UTF-8; and a real U+FFFD, which fromBinary reads.
      ["invalid UTF-8", Buffer.from([0x12, 0x02, 0xc3, 0x28])],
      ["U+FFFD", Buffer.from([0x12, 0x03, 0xef, 0xbf, 0xbd])],
      ["length past the end", Buffer.from([0x12, 0x7f, 0x61])],
    ];
    for (const [name, bytes] of cases) {
      expect([name, decodeSearchResponse(SearchResponseSchema, bytes)]).toEqual([name, undefined]);
      // fromBinary decides: each of these either reads (keeping unknown fields) or raises an error.
      const ref = reference(SearchResponseSchema, bytes);
      expect(ref).toBeDefined();
    }
    expect((reference(SearchResponseSchema, cases[0][1]) as { $unknown?: unknown[] }).$unknown).toHaveLength(1);
    expect(String((reference(SearchResponseSchema, cases[8][1]) as Error).message)).toMatch(/not valid for encoding utf-8/);
    expect((reference(SearchResponseSchema, cases[9][1]) as { scopeId: string }).scopeId).toBe("\ufffd");
    expect(
      decodeSearchResponse(
        HealthCheckResponseSchema,
        toBinary(HealthCheckResponseSchema, create(HealthCheckResponseSchema, { status: 1 })),
      ),
    ).toBeUndefined();
  });

  it("reads the same two answers the server writes with its own writer", () => {
    expect([...SEARCH_RESPONSE_RESULT_TYPES]).toEqual([
      [SearchResponseSchema.typeName, TextResultSchema.typeName],
      [SimilaritySearchResponseSchema.typeName, VectorResultSchema.typeName],
    ]);
  });
});
