import { createHash, hash } from "node:crypto";

/** What a document upsert stores, as far as the fingerprint is concerned. */
export interface FingerprintInput {
  content: string;
  metadata: Record<string, string>;
  chunks: ReadonlyArray<{ text: string; embedding?: Float32Array }>;
}

/**
 * A digest of everything an upsert stores for a document (content, metadata in key order, chunk texts
 * and embeddings, each length-prefixed so no two inputs collide by concatenation), so a store can tell
 * an identical re-upsert from a change without comparing rows. The fields are joined into as few strings
 * as the embeddings allow and hashed in one pass (one call per document without embeddings: the hash's
 * setup and a call per field were most of its cost); the bytes hashed are the same as field by field.
 */
export function documentFingerprint(doc: FingerprintInput): string {
  let text = "";
  const field = (s: string) => {
    text += `${Buffer.byteLength(s)}:${s}`;
  };
  field(doc.content);
  const keys = Object.keys(doc.metadata).sort();
  field(String(keys.length));
  for (const k of keys) {
    field(k);
    field(doc.metadata[k]);
  }
  field(String(doc.chunks.length));
  if (doc.chunks.every((c) => !c.embedding)) {
    for (const c of doc.chunks) {
      field(c.text);
      text += "-";
    }
    return hash("sha256", text, "hex");
  }
  const h = createHash("sha256");
  for (const c of doc.chunks) {
    field(c.text);
    if (c.embedding) {
      h.update(text);
      text = "";
      h.update(Buffer.from(c.embedding.buffer, c.embedding.byteOffset, c.embedding.byteLength));
    } else text += "-";
  }
  h.update(text);
  return h.digest("hex");
}
