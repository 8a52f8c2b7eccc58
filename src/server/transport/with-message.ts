/**
 * `obj` (a request or response an interceptor passes on) with its `message` replaced, everything else read
 * through the prototype: unlike a spread, getters stay getters (the gRPC fast path makes a call's signal,
 * headers and trailers on first read, and a spread would read them all, or drop those of a class).
 */
export function withMessage<T extends { message: unknown }, M>(obj: T, message: M): Omit<T, "message"> & { message: M } {
  return Object.create(obj, { message: { value: message, enumerable: true } }) as Omit<T, "message"> & { message: M };
}
