/**
 * The envelope of gRPC, gRPC-Web and Connect streams: a flag byte, the message's length (4 bytes, big-endian),
 * the message. A writer that leaves `FRAME_PREFIX_BYTES` free ahead of a message in its own buffer says so
 * with `leftRoomAhead`, and `frameOf` then writes the prefix there instead of copying the message.
 */

/** The envelope's prefix: a flag byte and a length. */
export const FRAME_PREFIX_BYTES = 5;

/** Messages with `FRAME_PREFIX_BYTES` of their own buffer free ahead of them, not yet framed. */
const roomAhead = new WeakSet<Uint8Array>();

/** `bytes` has `FRAME_PREFIX_BYTES` of its buffer free ahead of it, which nothing else reads or writes. */
export function leftRoomAhead(bytes: Uint8Array): void {
  roomAhead.add(bytes);
}

/** The frame of `bytes`: in place ahead of a message with room left (once: the frame then holds it), else a copy. */
export function frameOf(flags: number, bytes: Uint8Array): Buffer {
  if (roomAhead.delete(bytes)) {
    const whole = Buffer.from(bytes.buffer, bytes.byteOffset - FRAME_PREFIX_BYTES, bytes.length + FRAME_PREFIX_BYTES);
    whole[0] = flags;
    whole.writeUInt32BE(bytes.length, 1);
    return whole;
  }
  const out = Buffer.allocUnsafe(FRAME_PREFIX_BYTES + bytes.length);
  out[0] = flags;
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, FRAME_PREFIX_BYTES);
  return out;
}
