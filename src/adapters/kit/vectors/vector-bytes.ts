/** A vector as the bytes engines store it (float32, platform order): a view of the same memory, no copy. */
export function vectorToBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** The vector stored as `bytes`, copied: a Buffer's offset into its pool need not be 4-byte aligned. */
export function vectorFromBytes(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
