import { toBinary, type DescMessage, type Message } from "@bufbuild/protobuf";
import { encodeSearchResponse } from "./search-response-encoding.js";

const encoded = new WeakMap<Message, Uint8Array>();

/**
 * Serializes a response message once for two readers: the quota interceptor, which counts its bytes against
 * the per-call budget, and the gRPC fast path, which then writes those same bytes instead of serializing the
 * message again (a Search answer of 20 results cost two encodings per call). The bytes are kept until
 * `takeEncoded` reads them, so a message object changed after being measured is never sent stale twice.
 */
export function encodeForSend(schema: DescMessage, message: Message): Uint8Array {
  const bytes = encodeMessage(schema, message);
  encoded.set(message, bytes);
  return bytes;
}

/** The bytes `encodeForSend` made for `message` (forgotten once taken), else a fresh serialization. */
export function takeEncoded(schema: DescMessage, message: Message): Uint8Array {
  const bytes = encoded.get(message);
  if (bytes === undefined) return encodeMessage(schema, message);
  encoded.delete(message);
  return bytes;
}

/** `message` in protobuf's binary form: the search answers through their own writer, the rest through `toBinary`. */
export function encodeMessage(schema: DescMessage, message: Message): Uint8Array {
  return encodeSearchResponse(schema, message) ?? toBinary(schema, message);
}
