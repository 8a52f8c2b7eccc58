import { createHash } from "node:crypto";

/** What a document upsert stores, as far as the fingerprint is concerned. */
export interface FingerprintInput {
  content: string;
  metadata: Record<string, string>;
  chunks: ReadonlyArray<{ text: string; embedding?: Float32Array }>;
}

/**
 * A digest of everything an upsert stores for a document (content, metadata in key order, chunk texts
 * and embeddings, each length-prefixed so no two inputs collide by concatenation), so a store can tell
 * an identical re-upsert from a change without comparing rows.
 */
export function documentFingerprint(doc: FingerprintInput): string {
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
