import http from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { validateReadWriteMaxBytes, type UniversalClientRequest, type UniversalClientResponse } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";

/** Node's `http` module, or `https` for an https URL (loaded only then: it costs a one-call command ~20 ms). */
async function moduleFor(url: URL): Promise<Pick<typeof http, "request">> {
  return url.protocol === "https:" ? await import("node:https") : http;
}

function nodeHeaders(h: Headers): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  h.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function webHeaders(h: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [key, value] of Object.entries(h)) {
    if (Array.isArray(value)) for (const v of value) out.append(key, v);
    else if (value !== undefined) out.set(key, value);
  }
  return out;
}

async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  if (body) for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks);
}

/** A network failure as connect-node reports it (Unavailable, the Node error's message and code kept). */
function networkError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const e = err as NodeJS.ErrnoException;
  const message = e && typeof e.message === "string" ? `${e.message}${e.code && !e.message.includes(e.code) ? ` (${e.code})` : ""}` : String(err);
  return new ConnectError(message, Code.Unavailable, undefined, undefined, err);
}

/** One request over node:http: the request body sent whole, the response body read as it arrives. */
async function request(req: UniversalClientRequest): Promise<UniversalClientResponse> {
  const url = new URL(req.url);
  const [mod, body] = await Promise.all([moduleFor(url), collect(req.body)]);
  const { signal } = req;
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const out = mod.request(url, { method: req.method, headers: nodeHeaders(req.header) });
    const onAbort = () => out.destroy(new ConnectError("the operation was aborted", Code.Canceled));
    signal?.addEventListener("abort", onAbort, { once: true });
    out.once("close", () => signal?.removeEventListener("abort", onAbort));
    out.once("error", (err) => reject(networkError(err)));
    out.once("response", (res) => {
      res.once("error", () => undefined);
      const trailer = new Headers();
      resolve({
        status: res.statusCode ?? 0,
        header: webHeaders(res.headers),
        trailer,
        body: (async function* () {
          try {
            for await (const chunk of res) yield chunk as Uint8Array;
          } catch (err) {
            throw networkError(err);
          }
          webHeaders(res.trailers).forEach((v, k) => trailer.set(k, v));
        })(),
      });
    });
    out.end(body);
  });
}

/**
 * The Connect protocol (binary, uncompressed) over Node's `http` module alone, for the one-call commands
 * of the CLI. connect-node's transport imports node:http, https, http2 and zlib up front whatever the
 * protocol asked (about 70 ms of CPU in a process whose whole budget is 300 ms), and the fetch-based one
 * loads Node's bundled undici on the first call (about 50 ms).
 */
export function createHttp1ConnectTransport(opts: { baseUrl: string; interceptors?: Interceptor[] }): Transport {
  return createTransport({
    baseUrl: opts.baseUrl,
    httpClient: request,
    useBinaryFormat: true,
    interceptors: opts.interceptors ?? [],
    acceptCompression: [],
    sendCompression: null,
    ...validateReadWriteMaxBytes(undefined, undefined, undefined),
  });
}
