import { fromBinary } from "@bufbuild/protobuf";
import { DocumentInputSchema, type DocumentInput } from "../../../gen/acms/v1/index_pb.js";
import { InvalidArgumentError, type FieldViolation } from "../../domain/errors.js";

/** The longest one slice of decoding runs before it yields to the event loop (ms). */
export const DECODE_SLICE_MS = 5;
/** The most documents one slice decodes, however fast they go. */
export const DECODE_SLICE_DOCS = 1024;

/**
 * Decodes the encoded DocumentInput entries of one UpsertDocuments message (as `upsertDocumentsWireMethod`
 * leaves them), yielding to the event loop whenever a slice has run DECODE_SLICE_MS or decoded DECODE_SLICE_DOCS, so other callers and
 * health are answered while a large message is decoded. Entries that do not decode (malformed protobuf,
 * invalid UTF-8) are INVALID_ARGUMENT naming each one (`documents[3]`), as a body that does not decode is
 * in every protocol.
 */
export async function decodeDocumentSlices(encoded: readonly Uint8Array[]): Promise<DocumentInput[]> {
  const out: DocumentInput[] = new Array<DocumentInput>(encoded.length);
  const violations: FieldViolation[] = [];
  let sliceStart = performance.now();
  for (let i = 0; i < encoded.length; i++) {
    if (i > 0 && (i % DECODE_SLICE_DOCS === 0 || performance.now() - sliceStart >= DECODE_SLICE_MS)) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
    try {
      out[i] = fromBinary(DocumentInputSchema, encoded[i]);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      violations.push({
        field: `documents[${i}]`,
        description: `is not a valid ${DocumentInputSchema.typeName} message (${why.replace(/^parse binary: /, "")})`,
      });
    }
  }
  if (violations.length > 0) throw new InvalidArgumentError(violations);
  return out;
}
