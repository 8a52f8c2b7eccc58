/**
 * `Headers` for the two ends of an HTTP/2 stream in Node, used by the SDK's unary path and by the server's gRPC
 * fast path (both read and write Node's header objects, and both hand `Headers` to interceptors).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http2";

/** HTTP whitespace at either end of a value, which `Headers` strips on the way in. */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

function isHttpWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** `value` as `Headers` stores it: without HTTP whitespace at either end (checked before any regex runs). */
function trimmed(value: string): string {
  if (value.length === 0 || (!isHttpWhitespace(value.charCodeAt(0)) && !isHttpWhitespace(value.charCodeAt(value.length - 1)))) return value;
  return value.replace(EDGE_WHITESPACE, "");
}

/**
 * `Headers` whose entries are kept elsewhere until something asks what the subclass does not answer itself:
 * every method of `Headers` first calls `copyIn`, which moves them into the `Headers` underneath (once).
 */
abstract class DeferredHeaders extends Headers {
  /** Moves the entries kept elsewhere into the `Headers` underneath (through `store`); a no-op once done. */
  protected abstract copyIn(): void;

  /** Appends to the `Headers` underneath, past this class's methods. */
  protected store(name: string, value: string): void {
    super.append(name, value);
  }

  /** Each stored entry, as `Headers`' own `forEach` gives them. */
  protected forEachStored(callback: (value: string, key: string) => void): void {
    super.forEach(callback);
  }

  override get(name: string): string | null {
    this.copyIn();
    return super.get(name);
  }

  override has(name: string): boolean {
    this.copyIn();
    return super.has(name);
  }

  override append(name: string, value: string): void {
    this.copyIn();
    super.append(name, value);
  }

  override set(name: string, value: string): void {
    this.copyIn();
    super.set(name, value);
  }

  override delete(name: string): void {
    this.copyIn();
    super.delete(name);
  }

  override getSetCookie(): string[] {
    this.copyIn();
    return super.getSetCookie();
  }

  override forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.copyIn();
    super.forEach(callback, thisArg);
  }

  override entries(): HeadersIterator<[string, string]> {
    this.copyIn();
    return super.entries();
  }

  override keys(): HeadersIterator<string> {
    this.copyIn();
    return super.keys();
  }

  override values(): HeadersIterator<string> {
    this.copyIn();
    return super.values();
  }

  override [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }
}

/**
 * Headers received on an HTTP/2 stream (a call's request metadata on the server, an answer's headers and
 * trailers in the SDK) as `Headers`, answering `get` and `has` straight from Node's header object and copying
 * the headers in only when something else is asked (iteration, a change). A call reads two or three of them
 * (the server: authorization, acms-scope, x-request-id; the SDK: content-type, grpc-status, grpc-encoding);
 * copying all of them into a `Headers`, which validates each name and value, cost more than the reads.
 * Pseudo-headers (`:path`, `:status`...) are not metadata and are left out, as they are when copied.
 */
export class ReceivedHeaders extends DeferredHeaders {
  #raw: IncomingHttpHeaders | undefined;

  constructor(raw: IncomingHttpHeaders) {
    super();
    this.#raw = raw;
  }

  /** The raw value of `name` as `Headers.get` answers it (duplicates joined, edges trimmed); undefined once copied. */
  #peek(name: string): string | null | undefined {
    const raw = this.#raw;
    if (raw === undefined) return undefined;
    const key = name.toLowerCase();
    const v = key.startsWith(":") ? undefined : raw[key];
    if (typeof v !== "string" && !Array.isArray(v)) return null;
    return Array.isArray(v) ? v.map(trimmed).join(", ") : trimmed(v);
  }

  protected copyIn(): void {
    const raw = this.#raw;
    if (raw === undefined) return;
    this.#raw = undefined;
    for (const [k, v] of Object.entries(raw)) {
      if (k.startsWith(":") || v === undefined) continue;
      if (Array.isArray(v)) for (const item of v) this.store(k, item);
      else this.store(k, v);
    }
  }

  override get(name: string): string | null {
    const v = this.#peek(name);
    return v === undefined ? super.get(name) : v;
  }

  override has(name: string): boolean {
    const v = this.#peek(name);
    return v === undefined ? super.has(name) : v !== null;
  }
}

/** An HTTP token (RFC 9110), the names `Headers` accepts. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Printable ASCII without whitespace at either end: values `Headers` stores exactly as given. */
const PLAIN_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

/**
 * Headers to send on an HTTP/2 stream (a call's response headers on the server, its request headers in the
 * SDK) as `Headers`, holding what is only ever `set` in a map of its own until something else is asked (a
 * read, an append, iteration), when it is copied into the `Headers` underneath; `writeInto` writes them into
 * Node's header object. A call sets a few headers (the server: its request id; the SDK: content type,
 * timeout, authorization, scope) and writes them out: through `Headers`, which validates each value through
 * WebIDL and sorts its names on every iteration, that cost more than the rest of the headers' work. A name or
 * value `Headers` would change or refuse (not a token, not printable ASCII, whitespace at an end) takes the
 * `Headers` path, so it is normalised or refused exactly as `Headers` does.
 */
export class SendingHeaders extends DeferredHeaders {
  #set: Map<string, string> | undefined = new Map();

  protected copyIn(): void {
    const set = this.#set;
    if (set === undefined) return;
    this.#set = undefined;
    for (const [k, v] of set) this.store(k, v);
  }

  /** Writes the headers into Node's header object `out` (names in lower case, repeated values joined), as `forEach` would. */
  writeInto(out: OutgoingHttpHeaders): OutgoingHttpHeaders {
    const set = this.#set;
    if (set === undefined)
      this.forEachStored((value, key) => {
        out[key] = value;
      });
    else for (const [k, v] of set) out[k] = v;
    return out;
  }

  override set(name: string, value: string): void {
    const set = this.#set;
    if (set !== undefined && typeof name === "string" && typeof value === "string" && TOKEN.test(name) && PLAIN_VALUE.test(value)) {
      set.set(name.toLowerCase(), value);
      return;
    }
    super.set(name, value);
  }
}
