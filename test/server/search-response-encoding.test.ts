import fc from "fast-check";
import { create, toBinary, type DescMessage, type Message } from "@bufbuild/protobuf";
import { SearchResponseSchema, TextResultSchema } from "../../gen/acms/v1/text_pb.js";
import { SimilaritySearchResponseSchema, VectorResultSchema } from "../../gen/acms/v1/vector_pb.js";
import { HealthCheckResponseSchema } from "../../gen/grpc/health/v1/health_pb.js";
import { encodeSearchResponse, SEARCH_RESPONSE_TYPES } from "../../src/server/transport/search-response-encoding.js";
import { frameOf, FRAME_PREFIX_BYTES } from "../../src/server/transport/grpc-frame.js";
import { encodeMessage } from "../../src/server/transport/encoded-messages.js";

/** Strings of every kind the wire meets: empty, ASCII, 2-, 3- and 4-byte UTF-8, lone surrogates, long ones. */
const text = fc.oneof(
  fc.constant(""),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\ud800", "\udc00", " "), maxLength: 200 }),
  fc.string({ minLength: 5000, maxLength: 20000 }),
  fc.integer({ min: 0, max: 4 }).map((k) => "é".repeat([42, 43, 5461, 5462, 70000][k])),
);
const score = fc.oneof(
  fc.constant(0),
  fc.constant(-0),
  fc.constant(NaN),
  fc.constant(Infinity),
  fc.double(),
  fc.double({ min: 0, max: 1 }),
);
const metadata = fc.dictionary(fc.oneof(text, fc.constantFrom("10", "2", "0", "a", "__proto__", "constructor")), text, { maxKeys: 5 });
const result = fc.record({ ukoUri: text, content: text, score, metadata, resourceId: text, path: text });
const generation = fc.oneof(
  fc.constant(0n),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  fc.constantFrom(127n, 128n, 2n ** 63n, 2n ** 64n - 1n),
);
const answer = fc.record({
  results: fc.array(result, { maxLength: 30 }),
  scopeId: text,
  exhaustive: fc.boolean(),
  indexGeneration: generation,
});

function both(schema: DescMessage, resultSchema: DescMessage, a: { results: object[] }): [Message, Uint8Array] {
  const message = create(schema, { ...a, results: a.results.map((r) => create(resultSchema, r as never)) } as never);
  return [message, toBinary(schema, message)];
}

describe("the search answers' own writer", () => {
  it("writes the keyword and vector answers byte for byte as protobuf-es's toBinary does", () => {
    for (const [schema, resultSchema] of [
      [SearchResponseSchema, TextResultSchema],
      [SimilaritySearchResponseSchema, VectorResultSchema],
    ] as const) {
      fc.assert(
        fc.property(answer, (a) => {
          const [message, expected] = both(schema, resultSchema, a);
          const bytes = encodeSearchResponse(schema, message);
          expect(bytes).toBeDefined();
          expect(Buffer.from(bytes!).equals(Buffer.from(expected))).toBe(true);
        }),
        { numRuns: 300 },
      );
    }
  });

  it("writes 100 results of realistic chunks as toBinary does, answer after answer from its kept buffer", () => {
    const chunk = (i: number) => `Chunk ${i} of a document about ${"retrieval ".repeat(50 + (i % 7) * 40)} é€😀`;
    let previous: Uint8Array | undefined;
    for (let round = 0; round < 3; round++) {
      const message = create(SearchResponseSchema, {
        results: Array.from({ length: 100 }, (_, i) =>
          create(TextResultSchema, {
            ukoUri: `uko://docs/r${i}/doc-${i}.md#${round}`,
            content: chunk(i + round),
            score: 1 / (i + 1),
            metadata: { title: `Doc ${i}`, lang: "en" },
            resourceId: "01M95SAQYGH9D7EMC04CTG86Y6",
            path: `doc-${i}.md`,
          }),
        ),
        scopeId: "01M95SATEY4X01BYGS8BNHSRP6",
        exhaustive: round === 1,
        indexGeneration: BigInt(round * 1000),
      });
      const bytes = encodeSearchResponse(SearchResponseSchema, message)!;
      expect(Buffer.from(bytes).equals(Buffer.from(toBinary(SearchResponseSchema, message)))).toBe(true);
      // Each answer has its own bytes: the kept buffer's next use leaves the last answer as it was.
      if (previous) expect(previous).not.toBe(bytes);
      previous = bytes;
    }
  });

  it("writes an answer larger than the buffer it keeps, and the next one after it", () => {
    const big = create(SearchResponseSchema, {
      results: Array.from({ length: 5 }, (_, i) =>
        create(TextResultSchema, { ukoUri: `u${i}`, content: "x".repeat(2_000_000) + i, score: 0.5 }),
      ),
    });
    expect(Buffer.from(encodeSearchResponse(SearchResponseSchema, big)!).equals(Buffer.from(toBinary(SearchResponseSchema, big)))).toBe(
      true,
    );
    const small = create(SearchResponseSchema, { results: [create(TextResultSchema, { ukoUri: "u", content: "c" })], scopeId: "s" });
    expect(Buffer.from(encodeSearchResponse(SearchResponseSchema, small)!).equals(Buffer.from(toBinary(SearchResponseSchema, small)))).toBe(
      true,
    );
  });

  it("leaves to toBinary what it does not write: other messages, unknown fields, values of another type", () => {
    const health = create(HealthCheckResponseSchema, { status: 1 });
    expect(encodeSearchResponse(HealthCheckResponseSchema, health)).toBeUndefined();
    expect(
      Buffer.from(encodeMessage(HealthCheckResponseSchema, health)).equals(Buffer.from(toBinary(HealthCheckResponseSchema, health))),
    ).toBe(true);

    const withUnknown = create(SearchResponseSchema, { results: [create(TextResultSchema, { ukoUri: "u" })] });
    withUnknown.results[0].$unknown = [{ no: 99, wireType: 0, data: new Uint8Array([1]) }];
    expect(encodeSearchResponse(SearchResponseSchema, withUnknown)).toBeUndefined();
    expect(
      Buffer.from(encodeMessage(SearchResponseSchema, withUnknown)).equals(Buffer.from(toBinary(SearchResponseSchema, withUnknown))),
    ).toBe(true);

    const odd = create(SearchResponseSchema, { results: [create(TextResultSchema, { ukoUri: "u" })] });
    (odd.results[0] as unknown as { content: unknown }).content = 42;
    expect(encodeSearchResponse(SearchResponseSchema, odd)).toBeUndefined();
    // A message left to toBinary after a partial write: the next answer is still whole.
    const next = create(SearchResponseSchema, { results: [create(TextResultSchema, { ukoUri: "v", content: "w" })] });
    expect(Buffer.from(encodeSearchResponse(SearchResponseSchema, next)!).equals(Buffer.from(toBinary(SearchResponseSchema, next)))).toBe(
      true,
    );
  });

  it("frames an answer it wrote in place, once, and copies anything else", () => {
    const message = create(SearchResponseSchema, { results: [create(TextResultSchema, { ukoUri: "u", content: "hello" })], scopeId: "s" });
    const bytes = encodeSearchResponse(SearchResponseSchema, message)!;
    const expected = Buffer.from(toBinary(SearchResponseSchema, message));
    const frame = frameOf(0, bytes);
    const inPlace = (f: Buffer) => f.buffer === bytes.buffer && f.byteOffset + FRAME_PREFIX_BYTES === bytes.byteOffset;
    expect(inPlace(frame)).toBe(true);
    expect(frame[0]).toBe(0);
    expect(frame.readUInt32BE(1)).toBe(expected.length);
    expect(frame.subarray(FRAME_PREFIX_BYTES).equals(expected)).toBe(true);
    // Framed again (gzip retried, say): a copy, so the first frame is not overwritten.
    const again = frameOf(1, bytes);
    expect(inPlace(again)).toBe(false);
    expect(again.subarray(FRAME_PREFIX_BYTES).equals(expected)).toBe(true);
    expect(again[0]).toBe(1);
    expect(frame[0]).toBe(0);
    const other = new Uint8Array([1, 2, 3]);
    expect([...frameOf(1, other)]).toEqual([1, 0, 0, 0, 3, 1, 2, 3]);
  });

  it("knows the field numbers and types of every answer it writes (a change to the protos fails here)", () => {
    const layout = (schema: DescMessage) =>
      schema.fields.map((f) => `${f.number}:${f.name}:${f.fieldKind}:${f.scalar ?? f.message?.typeName ?? ""}`);
    for (const [schema, resultSchema] of [
      [SearchResponseSchema, TextResultSchema],
      [SimilaritySearchResponseSchema, VectorResultSchema],
    ] as const) {
      expect(SEARCH_RESPONSE_TYPES.has(schema.typeName)).toBe(true);
      expect(layout(schema)).toEqual([
        `1:results:list:${resultSchema.typeName}`,
        "2:scope_id:scalar:9",
        "3:exhaustive:scalar:8",
        "4:index_generation:scalar:4",
      ]);
      expect(layout(resultSchema)).toEqual([
        "1:uko_uri:scalar:9",
        "2:content:scalar:9",
        "3:score:scalar:1",
        "4:metadata:map:9",
        "5:resource_id:scalar:9",
        "6:path:scalar:9",
      ]);
    }
    expect(SEARCH_RESPONSE_TYPES.size).toBe(2);
  });
});
