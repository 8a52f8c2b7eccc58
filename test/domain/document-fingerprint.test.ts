import { createHash } from "node:crypto";
import fc from "fast-check";
import { documentFingerprint, type FingerprintInput } from "../../src/domain/document-fingerprint.js";

// Fingerprints are stored with every document version and compared with the next upload's: the digest must
// stay what it was when those rows were written. The reference is the field-by-field form it had then.
function reference(doc: FingerprintInput): string {
  const h = createHash("sha256");
  const field = (s: string) => {
    h.update(String(Buffer.byteLength(s)));
    h.update(":");
    h.update(s);
  };
  field(doc.content);
  const keys = Object.keys(doc.metadata).sort();
  field(String(keys.length));
  for (const k of keys) {
    field(k);
    field(doc.metadata[k]);
  }
  field(String(doc.chunks.length));
  for (const c of doc.chunks) {
    field(c.text);
    if (c.embedding) h.update(Buffer.from(c.embedding.buffer, c.embedding.byteOffset, c.embedding.byteLength));
    else h.update("-");
  }
  return h.digest("hex");
}

const text = fc.string({ unit: "grapheme", maxLength: 40 });
const embedding = fc.float32Array({ minLength: 1, maxLength: 8, noNaN: true });
const doc: fc.Arbitrary<FingerprintInput> = fc.record({
  content: text,
  metadata: fc.dictionary(text, text, { maxKeys: 4 }),
  chunks: fc.array(fc.record({ text, embedding: fc.option(embedding, { nil: undefined }) }), { maxLength: 5 }),
});

describe("documentFingerprint", () => {
  test("hashes the same bytes as field by field, with and without embeddings (property)", () => {
    fc.assert(
      fc.property(doc, (d) => {
        expect(documentFingerprint(d)).toBe(reference(d));
      }),
      { numRuns: 500 },
    );
  });

  test("an embedding inside a larger buffer hashes its own bytes only", () => {
    const backing = new Float32Array([9, 1, 2, 3, 9]);
    const d = { content: "c", metadata: {}, chunks: [{ text: "c", embedding: backing.subarray(1, 4) }] };
    expect(documentFingerprint(d)).toBe(reference({ ...d, chunks: [{ text: "c", embedding: new Float32Array([1, 2, 3]) }] }));
  });

  test("known digests stay as stored", () => {
    expect(documentFingerprint({ content: "hello", metadata: { b: "2", a: "1" }, chunks: [{ text: "hello" }] })).toBe(
      createHash("sha256").update("5:hello1:21:a1:11:b1:21:15:hello-").digest("hex"),
    );
  });

  test("tells apart inputs that concatenate alike", () => {
    const a = documentFingerprint({ content: "ab", metadata: {}, chunks: [{ text: "c" }] });
    const b = documentFingerprint({ content: "a", metadata: {}, chunks: [{ text: "bc" }] });
    const c = documentFingerprint({ content: "ab", metadata: { "": "" }, chunks: [{ text: "c" }] });
    expect(new Set([a, b, c]).size).toBe(3);
  });
});
