import type http from "node:http";
import type http2 from "node:http2";
import { cors } from "@connectrpc/connect";

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

/** Request headers of ours that a browser page sends besides Connect's and gRPC-Web's (API.md, "Headers"), and MCP's version header (POST /mcp). */
export const ACMS_REQUEST_HEADERS: readonly string[] = ["Authorization", "Acms-Scope", "X-Request-Id", "Mcp-Protocol-Version"];

/** Response headers of ours a page may read: the scope and index state of stream answers, partial RAG answers, the request id. */
export const ACMS_RESPONSE_HEADERS: readonly string[] = [
  "Acms-Scope-Id",
  "Acms-Exhaustive",
  "Acms-Index-Generation",
  "Acms-Partial",
  "Acms-Failed-Sources",
  "X-Request-Id",
];

/** How long a browser may reuse a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Wraps the RPC handler with CORS for the configured origins, so browser pages on those origins can call the
 * server with connect-web (Connect or gRPC-Web). Preflights from an allowed origin are answered here (204);
 * its actual requests get Allow-Origin and Expose-Headers (gRPC status trailers, our `acms-*` headers) and go
 * on to `handler`. Requests without an Origin, or from an origin not listed, get no CORS headers at all, so
 * the browser refuses the answer. `origins` undefined returns `handler` itself.
 *
 * @example const handler = withCors(connectNodeAdapter({ routes }), config.corsOrigins);
 */
export function withCors(handler: Handler, origins: "*" | readonly string[] | undefined): Handler {
  if (origins === undefined) return handler;
  const listed = origins === "*" ? undefined : new Set(origins);
  const allowMethods = cors.allowedMethods.join(", ");
  const allowHeaders = [...cors.allowedHeaders, ...ACMS_REQUEST_HEADERS].join(", ");
  const exposeHeaders = [...cors.exposedHeaders, ...ACMS_RESPONSE_HEADERS].join(", ");
  return (req, res) => {
    // The answer depends on the Origin whenever origins are listed: caches must key on it, allowed or not.
    if (listed) res.setHeader("Vary", "Origin");
    const origin = req.headers.origin;
    if (typeof origin !== "string" || (listed !== undefined && !listed.has(origin))) {
      handler(req, res);
      return;
    }
    res.setHeader("Access-Control-Allow-Origin", listed ? origin : "*");
    if (req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined) {
      res.setHeader("Access-Control-Allow-Methods", allowMethods);
      res.setHeader("Access-Control-Allow-Headers", allowHeaders);
      res.setHeader("Access-Control-Max-Age", String(PREFLIGHT_MAX_AGE_S));
      res.statusCode = 204;
      res.end();
      return;
    }
    res.setHeader("Access-Control-Expose-Headers", exposeHeaders);
    handler(req, res);
  };
}
