import type { DescMessage, Message } from "@bufbuild/protobuf";

/**
 * A reader for the keyword and vector search answers (`acms.v1.SearchResponse`,
 * `acms.v1.SimilaritySearchResponse`), the answers a client reads most and the largest: the same messages
 * protobuf-es's `fromBinary` makes (plain objects, `$typeName` first, every field in declaration order), at
 * about half its cost for 100 results (strings are read with Node's UTF-8 reader, not a `TextDecoder` call
 * each, and no reflection). Anything it does not expect (an unknown field, a field of another wire type,
 * bytes cut short, text that is not valid UTF-8 or holds U+FFFD) gives `undefined`, and the caller reads
 * the answer with `fromBinary`, which keeps unknown fields and raises its own errors. Node only (Buffer).
 */

/** The answers this reads, by type name, with their results' type names (same field numbers and types). */
export const SEARCH_RESPONSE_RESULT_TYPES: ReadonlyMap<string, string> = new Map([
  ["acms.v1.SearchResponse", "acms.v1.TextResult"],
  ["acms.v1.SimilaritySearchResponse", "acms.v1.VectorResult"],
]);

/** Thrown inside a read to hand the bytes to `fromBinary`; never leaves this module. */
const NOT_MINE = new Error("not read here");

const EMPTY = Buffer.alloc(0);
let b: Buffer = EMPTY;
let p = 0;

function varint32(): number {
  let n = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (p >= b.length) throw NOT_MINE;
    const byte = b[p++];
    n += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) {
      if (n > 0x7fffffff) throw NOT_MINE;
      return n;
    }
  }
  throw NOT_MINE;
}

function varint64(): bigint {
  let n = 0n;
  for (let shift = 0n; shift < 70n; shift += 7n) {
    if (p >= b.length) throw NOT_MINE;
    const byte = b[p++];
    n |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return BigInt.asUintN(64, n);
  }
  throw NOT_MINE;
}

/** The end of a length-delimited field's bytes starting at `p`, within `end`. */
function delimited(end: number): number {
  const len = varint32();
  if (p + len > end) throw NOT_MINE;
  return p + len;
}

function string(end: number): string {
  const stop = delimited(end);
  const s = (b as unknown as { utf8Slice(start: number, end: number): string }).utf8Slice(p, stop);
  // Node's reader puts U+FFFD where the bytes are not UTF-8; fromBinary refuses them (or, for a real U+FFFD, reads the same).
  if (s.indexOf("\ufffd") !== -1) throw NOT_MINE;
  p = stop;
  return s;
}

interface Result {
  $typeName: string;
  ukoUri: string;
  content: string;
  score: number;
  metadata: Record<string, string>;
  resourceId: string;
  path: string;
}

function result(typeName: string, end: number): Result {
  const r: Result = { $typeName: typeName, ukoUri: "", content: "", score: 0, metadata: {}, resourceId: "", path: "" };
  while (p < end) {
    const tag = varint32();
    switch (tag) {
      case 0x0a:
        r.ukoUri = string(end);
        break;
      case 0x12:
        r.content = string(end);
        break;
      case 0x19:
        if (p + 8 > end) throw NOT_MINE;
        r.score = b.readDoubleLE(p);
        p += 8;
        break;
      case 0x22: {
        const stop = delimited(end);
        let key = "";
        let value = "";
        while (p < stop) {
          const t = varint32();
          if (t === 0x0a) key = string(stop);
          else if (t === 0x12) value = string(stop);
          else throw NOT_MINE;
        }
        if (p !== stop) throw NOT_MINE;
        // fromBinary's map: a plain object, a repeated key's last value wins; "__proto__" is a key like any
        // other (an own property, never the object's prototype).
        if (key === "__proto__") Object.defineProperty(r.metadata, key, { value, enumerable: true, writable: true, configurable: true });
        else r.metadata[key] = value;
        break;
      }
      case 0x2a:
        r.resourceId = string(end);
        break;
      case 0x32:
        r.path = string(end);
        break;
      default:
        throw NOT_MINE;
    }
  }
  if (p !== end) throw NOT_MINE;
  return r;
}

/**
 * `data` read as `schema` (one of `SEARCH_RESPONSE_RESULT_TYPES`) gives, as `fromBinary(schema, data)` would;
 * `undefined` for another type, or bytes this leaves to `fromBinary`.
 */
export function decodeSearchResponse(schema: DescMessage, data: Uint8Array): Message | undefined {
  const resultType = SEARCH_RESPONSE_RESULT_TYPES.get(schema.typeName);
  if (resultType === undefined) return undefined;
  b = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  p = 0;
  const end = b.length;
  const results: Result[] = [];
  const answer = { $typeName: schema.typeName, results, scopeId: "", exhaustive: false, indexGeneration: 0n };
  try {
    while (p < end) {
      const tag = varint32();
      switch (tag) {
        case 0x0a: {
          const stop = delimited(end);
          results.push(result(resultType, stop));
          break;
        }
        case 0x12:
          answer.scopeId = string(end);
          break;
        case 0x18:
          answer.exhaustive = varint64() !== 0n;
          break;
        case 0x20:
          answer.indexGeneration = varint64();
          break;
        default:
          throw NOT_MINE;
      }
    }
    return answer as unknown as Message;
  } catch (err) {
    if (err === NOT_MINE) return undefined;
    throw err;
  } finally {
    b = EMPTY;
  }
}
