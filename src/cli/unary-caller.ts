import http from "node:http";
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeFromHttpStatus, errorFromJsonBytes, protocolVersion } from "@connectrpc/connect/protocol-connect";

/** Makes one unary call of a method; the lean client of a one-call command (see `unaryCaller`). */
export type UnaryCaller = <I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  input: MessageInitShape<I>,
) => Promise<MessageShape<O>>;

/** Node's `http` module, or `https` for an https URL (loaded only then: it costs a one-call command ~20 ms). */
async function moduleFor(url: URL): Promise<Pick<typeof http, "request">> {
  return url.protocol === "https:" ? await import("node:https") : http;
}

/** A failure to reach the server as connect-node reports it: Unavailable, with Node's message (and code). */
function networkError(err: unknown): ConnectError {
  const e = err as NodeJS.ErrnoException;
  const message = e instanceof Error ? (e.code && !e.message.includes(e.code) ? `${e.message} (${e.code})` : e.message) : String(err);
  return new ConnectError(message, Code.Unavailable, undefined, undefined, err);
}

/** POSTs `body` to `url` and answers the status and the whole response body. */
async function post(url: URL, headers: Record<string, string>, body: Uint8Array): Promise<{ status: number; body: Buffer }> {
  const mod = await moduleFor(url);
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method: "POST", headers: { ...headers, "content-length": String(body.byteLength) } });
    req.once("error", (err) => reject(networkError(err)));
    req.once("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.once("error", (err) => reject(networkError(err)));
      res.once("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.end(body);
  });
}

/**
 * Unary calls in the Connect protocol (binary, uncompressed) over Node's `http` module alone, with the key
 * and scope headers, for the one-call commands of the CLI (`acms search text`). Connect's transports cost
 * such a command most of its time after Node's start: connect-node's imports node:http, https, http2 and
 * zlib up front, and any transport builds `Headers`, whose first use loads Node's bundled undici (about
 * 30-50 ms each). Errors arrive as ConnectError with their details, as from Connect's own client.
 */
export function unaryCaller(baseUrl: string, apiKey: string, scopeId: string | undefined): UnaryCaller {
  const headers: Record<string, string> = {
    "content-type": "application/proto",
    "connect-protocol-version": String(protocolVersion),
    authorization: `Bearer ${apiKey}`,
  };
  if (scopeId) headers["acms-scope"] = scopeId;
  return async (method, input) => {
    const url = new URL(`${baseUrl.replace(/\/+$/, "")}/${method.parent.typeName}/${method.name}`);
    const res = await post(url, headers, toBinary(method.input, create(method.input, input)));
    if (res.status === 200) {
      try {
        return fromBinary(method.output, res.body);
      } catch (err) {
        throw new ConnectError(`parse binary: ${err instanceof Error ? err.message : String(err)}`, Code.Internal);
      }
    }
    throw errorFromJsonBytes(res.body, undefined, new ConnectError(`HTTP ${res.status}`, codeFromHttpStatus(res.status)));
  };
}
