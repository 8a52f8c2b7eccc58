import type { DescMessage, Message } from "@bufbuild/protobuf";
import { FRAME_PREFIX_BYTES, leftRoomAhead } from "./grpc-frame.js";

/**
 * A writer for the two keyword and vector search answers (`acms.v1.SearchResponse`,
 * `acms.v1.SimilaritySearchResponse`: results of uko_uri, content, score, metadata, resource_id and path, then
 * scope_id, exhaustive and index_generation), the server's hottest message: byte for byte what protobuf-es's
 * `toBinary` writes (fields in number order, proto3's zero values left out, map entries in `Object.keys`
 * order with both their fields), without its costs for a large answer. `toBinary` starts from a 128-byte
 * buffer and doubles it (nine copies for 100 results of ~500 bytes), moves each result's bytes once more to
 * widen its one-byte length prefix, and copies the whole out at the end; the gRPC frame then copies it again.
 * This writes into a buffer kept between calls, reserving each length prefix for the most its bytes can take
 * (3 UTF-8 bytes a UTF-16 unit), and copies the answer out once, into a buffer with room for the gRPC frame's
 * prefix ahead of it (`frameOf`, grpc-frame.ts, writes the frame there). A message carrying unknown fields, or a value of an
 * unexpected type, is left to `toBinary` (`undefined`).
 */

/** The answers this writes, by type name: both have the same field numbers and types (checked in tests). */
export const SEARCH_RESPONSE_TYPES: ReadonlySet<string> = new Set(["acms.v1.SearchResponse", "acms.v1.SimilaritySearchResponse"]);

/** The kept buffer's size; one grown past `KEEP_MAX_BYTES` for a large answer is dropped after it. */
const INITIAL_BYTES = 64 * 1024;
const KEEP_MAX_BYTES = 4 * 1024 * 1024;

let buf = Buffer.allocUnsafe(INITIAL_BYTES);
let pos = 0;

interface ResultFields {
  ukoUri: unknown;
  content: unknown;
  score: unknown;
  metadata: unknown;
  resourceId: unknown;
  path: unknown;
  $unknown?: unknown;
}

interface ResponseFields {
  results: unknown;
  scopeId: unknown;
  exhaustive: unknown;
  indexGeneration: unknown;
  $unknown?: unknown;
}

/** Thrown inside a write to hand the message to `toBinary`; never leaves this module. */
const NOT_MINE = new Error("not written here");

function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  const next = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(next, 0, 0, pos);
  buf = next;
}

function varint32Size(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

/** A varint of at most 32 bits at `at` (room ensured); the position after it. */
function putVarint32(n: number, at: number): number {
  while (n > 0x7f) {
    buf[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[at++] = n;
  return at;
}

/**
 * Closes a length-delimited field whose prefix was reserved at `lenAt` with `reserved` bytes and whose
 * payload starts at `start`: writes its length there, moving the payload back when it needs fewer bytes.
 */
function closeLength(lenAt: number, reserved: number, start: number): void {
  const n = pos - start;
  const size = varint32Size(n);
  if (size < reserved) {
    buf.copyWithin(lenAt + size, start, pos);
    pos -= reserved - size;
  }
  putVarint32(n, lenAt);
}

/** A string field (tag byte `tag`), left out when empty unless `always` (map entries write both fields). */
function putString(tag: number, s: unknown, always: boolean): void {
  if (typeof s !== "string") throw NOT_MINE;
  if (s === "" && !always) return;
  const most = s.length * 3;
  const reserved = varint32Size(most);
  ensure(1 + reserved + most);
  buf[pos++] = tag;
  const lenAt = pos;
  pos += reserved;
  const start = pos;
  pos += (buf as unknown as { utf8Write(s: string, at: number, max: number): number }).utf8Write(s, start, most);
  closeLength(lenAt, reserved, start);
}

function putResult(r: ResultFields): void {
  if (typeof r !== "object" || r === null || r.$unknown !== undefined) throw NOT_MINE;
  const { ukoUri, content, score, metadata, resourceId, path } = r;
  if (typeof ukoUri !== "string" || typeof content !== "string" || typeof resourceId !== "string" || typeof path !== "string")
    throw NOT_MINE;
  if (typeof score !== "number" || typeof metadata !== "object" || metadata === null) throw NOT_MINE;
  const meta = metadata as Record<string, unknown>;
  const keys = Object.keys(meta);
  // The most the result's bytes can take: every string at 3 bytes a unit, each with a tag and a 5-byte length.
  let most = 3 * (ukoUri.length + content.length + resourceId.length + path.length) + 4 * 6 + 9;
  for (let i = 0; i < keys.length; i++) {
    const v = meta[keys[i]];
    if (typeof v !== "string") throw NOT_MINE;
    most += 3 * (keys[i].length + v.length) + 3 * 6;
  }
  const reserved = varint32Size(most);
  ensure(1 + reserved);
  buf[pos++] = 0x0a; // results = 1, length-delimited
  const lenAt = pos;
  pos += reserved;
  const start = pos;
  putString(0x0a, ukoUri, false); // uko_uri = 1
  putString(0x12, content, false); // content = 2
  if (!Object.is(score, 0)) {
    // score = 3, 64-bit
    ensure(9);
    buf[pos++] = 0x19;
    pos = buf.writeDoubleLE(score, pos);
  }
  for (let i = 0; i < keys.length; i++) {
    // metadata = 4: an entry of key = 1 and value = 2, both always written
    const key = keys[i];
    const entryMost = 3 * (key.length + (meta[key] as string).length) + 12;
    const entryReserved = varint32Size(entryMost);
    ensure(1 + entryReserved);
    buf[pos++] = 0x22;
    const entryLenAt = pos;
    pos += entryReserved;
    const entryStart = pos;
    putString(0x0a, key, true);
    putString(0x12, meta[key], true);
    closeLength(entryLenAt, entryReserved, entryStart);
  }
  putString(0x2a, resourceId, false); // resource_id = 5
  putString(0x32, path, false); // path = 6
  closeLength(lenAt, reserved, start);
}

function putUint64(tag: number, v: unknown): void {
  let n: bigint;
  if (typeof v === "bigint") n = v;
  else if (typeof v === "number" && Number.isSafeInteger(v)) n = BigInt(v);
  else if (typeof v === "string" && /^[0-9]+$/.test(v)) n = BigInt(v);
  else throw NOT_MINE;
  if (n === 0n) return;
  if (n < 0n || n > 0xffffffffffffffffn) throw NOT_MINE;
  ensure(11);
  buf[pos++] = tag;
  while (n > 0x7fn) {
    buf[pos++] = Number(n & 0x7fn) | 0x80;
    n >>= 7n;
  }
  buf[pos++] = Number(n);
}

/**
 * `message` (of `schema`, one of `SEARCH_RESPONSE_TYPES`) as `toBinary` writes it, with `FRAME_PREFIX_BYTES`
 * free ahead of it for `frameOf`; `undefined` for another type, or one this leaves to `toBinary`.
 */
export function encodeSearchResponse(schema: DescMessage, message: Message): Uint8Array | undefined {
  if (!SEARCH_RESPONSE_TYPES.has(schema.typeName)) return undefined;
  const m = message as unknown as ResponseFields;
  if (m.$unknown !== undefined || !Array.isArray(m.results)) return undefined;
  pos = 0;
  let written = true;
  try {
    const results = m.results as ResultFields[];
    for (let i = 0; i < results.length; i++) putResult(results[i]);
    putString(0x12, m.scopeId, false); // scope_id = 2
    if (typeof m.exhaustive !== "boolean") throw NOT_MINE;
    if (m.exhaustive) {
      // exhaustive = 3, varint
      ensure(2);
      buf[pos++] = 0x18;
      buf[pos++] = 1;
    }
    putUint64(0x20, m.indexGeneration); // index_generation = 4
  } catch (err) {
    if (err !== NOT_MINE) throw err;
    written = false;
  }
  let bytes: Uint8Array | undefined;
  if (written) {
    const out = Buffer.allocUnsafe(FRAME_PREFIX_BYTES + pos);
    buf.copy(out, FRAME_PREFIX_BYTES, 0, pos);
    bytes = out.subarray(FRAME_PREFIX_BYTES);
    leftRoomAhead(bytes);
  }
  if (buf.length > KEEP_MAX_BYTES) buf = Buffer.allocUnsafe(INITIAL_BYTES);
  return bytes;
}
