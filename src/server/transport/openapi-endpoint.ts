import { readFile } from "node:fs/promises";
import type http from "node:http";
import type http2 from "node:http2";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
type Handler = (req: Request, res: Response) => void;

/** Where the OpenAPI document of the HTTP/JSON (Connect) surface is served: public, like health; no key. */
export const OPENAPI_PATH = "/openapi.json";

/**
 * Wraps the RPC handler so that GET/HEAD `/openapi.json` answer the OpenAPI document at `file`
 * (openapi/acms.openapi.json, generated from the protos by scripts/generate-api-docs.sh). The file is read
 * once, on the first request; a missing file answers 503. Every other request goes to `handler` untouched.
 * It describes the contract only, nothing tenant-held, so it needs no key.
 *
 * @example listen(withCors(withOpenApi(handler, config.openapiFile), origins), host, port)
 */
export function withOpenApi(handler: Handler, file: string): Handler {
  let document: Promise<Buffer> | undefined;
  return (req, res) => {
    const pathname = (req.url ?? "/").split("?", 1)[0];
    if (pathname !== OPENAPI_PATH) {
      handler(req, res);
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" });
      res.end("GET /openapi.json\n");
      return;
    }
    document ??= readFile(file);
    document.then(
      (body) => {
        res.writeHead(200, {
          "Content-Type": "application/json; charset=utf-8",
          "Content-Length": String(body.length),
          "Cache-Control": "no-cache",
          "X-Content-Type-Options": "nosniff",
        });
        if (req.method === "HEAD") res.end();
        else res.end(body);
      },
      () => {
        document = undefined;
        res.writeHead(503, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
        res.end("openapi.json: the document is missing (scripts/generate-api-docs.sh writes openapi/acms.openapi.json)\n");
      },
    );
  };
}
