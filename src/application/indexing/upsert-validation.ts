import { chunkText, DEFAULT_CHUNKING, type ChunkingOptions } from "../../domain/chunking.js";
import { validateDocumentPath } from "../../domain/document-path.js";
import { InvalidArgumentError, type FieldViolation } from "../../domain/errors.js";
import { metadataViolations } from "../../domain/metadata-limits.js";
import { hasNul, NUL_PROBLEM } from "../../domain/nul-character.js";
import { embeddingProblem } from "../../domain/request-limits.js";
import type { ChunkInputRecord, DocumentInputRecord } from "../../ports/document-store.js";
import type { TextChunker } from "../../ports/text-chunker.js";

/** The largest document content accepted, in UTF-8 bytes. */
export const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;
/** The most client chunks per document. */
export const MAX_CHUNKS_PER_DOCUMENT = 10_000;

/** One chunk of a document as a client sends it: its text and, optionally, its embedding (empty: none). */
export interface UpsertChunkInput {
  text: string;
  embedding: readonly number[];
}

/** One document as a client sends it, before validation. */
export interface UpsertDocumentInput {
  path: string;
  content: string;
  metadata: Record<string, string>;
  chunks: readonly UpsertChunkInput[];
}

/** One UpsertDocuments message as the write pipeline takes it (the wire message has this shape). */
export interface UpsertMessage {
  resourceId: string;
  documents: readonly UpsertDocumentInput[];
}

/** What validating an UpsertDocuments message needs. */
export interface UpsertValidationOptions {
  /** The deployment's embedding dimension. */
  embeddingDim: number;
  chunking?: ChunkingOptions;
  /**
   * Content characters (plus one per document) checked and chunked between two event-loop turns at most
   * (default VALIDATION_SLICE_CHARS); tests pass small values to force many slices.
   */
  sliceChars?: number;
  /**
   * Chunks content off the serving thread (documents of CHUNK_INLINE_MAX_CHARS or more sent without chunks), in
   * `tenant`'s fair queue; the message is checked first and chunked only when valid. Absent: chunked here, a
   * document per slice step.
   */
  chunker?: TextChunker;
  tenant?: string;
  signal?: AbortSignal;
}

/**
 * Documents this long (characters) or longer are chunked by the chunker (off the serving thread) when there is
 * one; shorter ones here, within the validation's slices. Chunking costs ~0.2-0.35 µs a character (a 4 MB
 * document of unseen words: 1.4 s), so a document under this costs at most a few milliseconds here, where
 * sending it to a thread and back would cost more than chunking it (five-document messages of ~1 KB
 * documents uploaded 20% slower through the threads: each thread's memory of pieces starts cold and each
 * message waited for its round trip).
 */
export const CHUNK_INLINE_MAX_CHARS = 16 * 1024;

/** Content checked and chunked per event-loop turn at most. */
export const VALIDATION_SLICE_CHARS = 256 * 1024;
/**
 * The longest a slice of validation runs before it yields (ms). The character bound alone is not enough:
 * a message of many small documents costs per document (path checks, chunking's tokenizer), and 20,000 of
 * them within 256 KiB held the event loop for over half a second.
 */
export const VALIDATION_SLICE_MS = 5;

/**
 * Checks one UpsertDocuments message and turns it into store input, chunking content server-side when
 * a document brings no chunks. Every problem of the message is reported at once as INVALID_ARGUMENT,
 * each naming its field (`documents[2].chunks[0].embedding`), so a rejected message writes nothing.
 * The documents are checked a slice at a time (`sliceChars` of content, or VALIDATION_SLICE_MS), yielding to the event loop
 * between slices, so a message of many documents never holds other calls for long; nothing is written
 * before the whole message has passed.
 */
export async function validateUpsertMessage(msg: UpsertMessage, opts: UpsertValidationOptions): Promise<DocumentInputRecord[]> {
  if (msg.documents.length === 0) throw InvalidArgumentError.field("documents", "must not be empty");
  const violations: FieldViolation[] = [];
  const firstByPath = new Map<string, number>();
  const out: DocumentInputRecord[] = [];
  /** Documents (their places in `out`) the chunker chunks once the message is valid. */
  const toChunk: number[] = [];
  const sliceChars = Math.max(1, opts.sliceChars ?? VALIDATION_SLICE_CHARS);
  let sliced = 0;
  let sliceStart = performance.now();
  for (let i = 0; i < msg.documents.length; i++) {
    const doc = msg.documents[i];
    sliced += doc.content.length + 1;
    if (sliced > sliceChars || performance.now() - sliceStart >= VALIDATION_SLICE_MS) {
      sliced = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
    const at = `documents[${i}]`;
    const before = violations.length;
    const pathProblem = validateDocumentPath(doc.path);
    if (pathProblem) violations.push({ field: `${at}.path`, description: pathProblem });
    else if (firstByPath.has(doc.path)) {
      violations.push({
        field: `${at}.path`,
        description: `"${doc.path.slice(0, 120)}" repeats documents[${firstByPath.get(doc.path)}].path`,
      });
    } else firstByPath.set(doc.path, i);
    if (doc.content.trim().length === 0) violations.push({ field: `${at}.content`, description: "must not be empty" });
    else if (doc.content.length > MAX_DOCUMENT_BYTES || Buffer.byteLength(doc.content) > MAX_DOCUMENT_BYTES) {
      violations.push({
        field: `${at}.content`,
        description: `must be at most ${MAX_DOCUMENT_BYTES} bytes, got ${Buffer.byteLength(doc.content)}`,
      });
    } else if (hasNul(doc.content)) violations.push({ field: `${at}.content`, description: NUL_PROBLEM });
    violations.push(...metadataViolations(`${at}.metadata`, doc.metadata));
    if (doc.chunks.length > MAX_CHUNKS_PER_DOCUMENT) {
      violations.push({
        field: `${at}.chunks`,
        description: `must have at most ${MAX_CHUNKS_PER_DOCUMENT} chunks, got ${doc.chunks.length}`,
      });
    }
    const chunks: ChunkInputRecord[] = [];
    doc.chunks.forEach((c, j) => {
      const cat = `${at}.chunks[${j}]`;
      if (c.text.trim().length === 0) violations.push({ field: `${cat}.text`, description: "must not be empty" });
      else if (Buffer.byteLength(c.text) > MAX_DOCUMENT_BYTES) {
        violations.push({ field: `${cat}.text`, description: `must be at most ${MAX_DOCUMENT_BYTES} bytes` });
      } else if (hasNul(c.text)) violations.push({ field: `${cat}.text`, description: NUL_PROBLEM });
      if (c.embedding.length === 0) {
        chunks.push({ text: c.text });
        return;
      }
      const why = embeddingProblem(c.embedding, opts.embeddingDim);
      if (why) violations.push({ field: `${cat}.embedding`, description: why });
      else chunks.push({ text: c.text, embedding: Float32Array.from(c.embedding) });
    });
    if (violations.length > before) continue;
    const serverChunked = doc.chunks.length === 0;
    const offThread = serverChunked && opts.chunker !== undefined && doc.content.length >= CHUNK_INLINE_MAX_CHARS;
    if (offThread) toChunk.push(out.length);
    out.push({
      path: doc.path,
      content: doc.content,
      metadata: { ...doc.metadata },
      chunks: !serverChunked
        ? chunks
        : offThread
          ? []
          : chunkText(doc.content, opts.chunking ?? DEFAULT_CHUNKING).map((text) => ({ text })),
    });
  }
  if (violations.length > 0) throw new InvalidArgumentError(violations);
  if (opts.chunker && toChunk.length > 0) {
    const texts = toChunk.map((i) => out[i].content);
    const chunked = await opts.chunker.chunk(opts.tenant ?? msg.resourceId, texts, opts.chunking ?? DEFAULT_CHUNKING, opts.signal);
    toChunk.forEach((i, k) => (out[i].chunks = chunked[k].map((text) => ({ text }))));
  }
  return out;
}
