import type http2 from "node:http2";

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
 * A gRPC call's request metadata as `Headers`, answering `get` and `has` straight from Node's HTTP/2 header
 * object and copying the headers in only when something else is asked (iteration, a change). Interceptors
 * read two or three headers of every call (authorization, acms-scope, x-request-id); copying all of them
 * into a `Headers`, which validates each name and value, cost more than the reads. Pseudo-headers
 * (`:path`, `:authority`...) are not metadata and are left out, as they were when copied.
 */
export class RawRequestHeaders extends Headers {
  #raw: http2.IncomingHttpHeaders | undefined;

  constructor(raw: http2.IncomingHttpHeaders) {
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

  #copy(): void {
    const raw = this.#raw;
    if (raw === undefined) return;
    this.#raw = undefined;
    for (const [k, v] of Object.entries(raw)) {
      if (k.startsWith(":") || v === undefined) continue;
      if (Array.isArray(v)) for (const item of v) super.append(k, item);
      else super.append(k, v);
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

  override append(name: string, value: string): void {
    this.#copy();
    super.append(name, value);
  }

  override set(name: string, value: string): void {
    this.#copy();
    super.set(name, value);
  }

  override delete(name: string): void {
    this.#copy();
    super.delete(name);
  }

  override getSetCookie(): string[] {
    this.#copy();
    return super.getSetCookie();
  }

  override forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.#copy();
    super.forEach(callback, thisArg);
  }

  override entries(): HeadersIterator<[string, string]> {
    this.#copy();
    return super.entries();
  }

  override keys(): HeadersIterator<string> {
    this.#copy();
    return super.keys();
  }

  override values(): HeadersIterator<string> {
    this.#copy();
    return super.values();
  }

  override [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }
}
