import { readFile, realpath, stat } from "node:fs/promises";
import { extname, join, sep } from "node:path";
import type http from "node:http";
import type http2 from "node:http2";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
type Handler = (req: Request, res: Response) => void;

/** The console's own JSON endpoints by exact path (e.g. the key's stored scopes), answered before any file. */
export type ConsoleApi = Record<string, (req: Request, res: Response) => Promise<void>>;

/** The console's endpoints live below this path; an unknown one is 404 whether or not the console is built. */
export const CONSOLE_API_PREFIX = "/console/api/";

/** Where the console lives on the server: every path under it is ours, never an RPC. */
export const CONSOLE_PATH = "/console";

/** Content types of the files a Vite build emits; anything else is served as bytes. */
const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

/**
 * Security headers for every console answer: the page runs only its own scripts and talks only to this
 * origin, so an injected string can neither run nor send the key elsewhere; it is never framed.
 */
const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/** Vite puts a content hash in every file name under assets/: those never change and may be cached for good. */
const IMMUTABLE_PREFIX = "assets/";

/**
 * Wraps the RPC handler so that GET/HEAD under `/console` serve the operator's console from `dir` (the Vite
 * build, `npm run build`) on the same origin as the API, so the page needs no CORS. Only regular files inside
 * `dir` are served (encoded or raw `..`, NUL, backslashes and symlinks leading out are refused with 404);
 * `/console` and `/console/` answer `index.html`; anything else under `/console` is 404. When `dir` holds no
 * build, `/console` answers 503 with how to build it. The paths of `api` (under `/console`) go to their
 * endpoints. Every other path goes to `handler` untouched.
 *
 * @example listen(withConsole(handler, config.consoleDir, { [CONSOLE_SCOPES_PATH]: scopesEndpoint }), host, port)
 */
export function withConsole(handler: Handler, dir: string, api: ConsoleApi = {}): Handler {
  return (req, res) => {
    const url = req.url ?? "/";
    const pathname = url.split("?", 1)[0];
    if (pathname !== CONSOLE_PATH && !pathname.startsWith(`${CONSOLE_PATH}/`)) {
      handler(req, res);
      return;
    }
    const endpoint = api[pathname];
    if (endpoint) {
      endpoint(req, res).catch(() => {
        if (!res.headersSent)
          send(res, req, 500, "application/json; charset=utf-8", '{"code":"internal","message":"console: internal error"}', "no-store");
        else res.end();
      });
      return;
    }
    if (pathname.startsWith(CONSOLE_API_PREFIX)) {
      send(res, req, 404, "application/json; charset=utf-8", '{"code":"not_found","message":"console: no such endpoint"}', "no-store");
      return;
    }
    serveConsole(req, res, dir, pathname.slice(CONSOLE_PATH.length)).catch(() => {
      if (!res.headersSent) send(res, req, 500, "text/plain; charset=utf-8", "console: internal error\n", "no-store");
      else res.end();
    });
  };
}

async function serveConsole(req: Request, res: Response, dir: string, rest: string): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    send(res, req, 405, "text/plain; charset=utf-8", "console: GET or HEAD only\n", "no-store");
    return;
  }
  const root = await realpath(dir).catch(() => undefined);
  const index = root === undefined ? undefined : await regularFile(join(root, "index.html"));
  if (root === undefined || index === undefined) {
    send(res, req, 503, "text/plain; charset=utf-8", notBuiltMessage(dir), "no-store");
    return;
  }
  const relative = relativeAssetPath(rest);
  if (relative === undefined) {
    send(res, req, 404, "text/plain; charset=utf-8", "console: no such file\n", "no-store");
    return;
  }
  const file = relative === "" ? index : await regularFile(join(root, relative));
  // realpath resolves symlinks: a link inside the build pointing outside it is not served.
  if (file === undefined || !file.startsWith(root + sep)) {
    send(res, req, 404, "text/plain; charset=utf-8", "console: no such file\n", "no-store");
    return;
  }
  const body = await readFile(file);
  const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream";
  const cache = relative.startsWith(IMMUTABLE_PREFIX) ? "public, max-age=31536000, immutable" : "no-cache";
  send(res, req, 200, type, body, cache);
}

/**
 * The path below `/console/` as a relative file path, or undefined when it could leave the folder or is not
 * a plain path: percent-decoding happens once, and `.`/`..`/empty segments, backslashes and NUL are refused.
 */
export function relativeAssetPath(rest: string): string | undefined {
  if (rest === "" || rest === "/") return "";
  if (!rest.startsWith("/")) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest.slice(1));
  } catch {
    return undefined;
  }
  if (decoded.includes("\0") || decoded.includes("\\")) return undefined;
  const segments = decoded.split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) return undefined;
  return segments.join("/");
}

async function regularFile(path: string): Promise<string | undefined> {
  try {
    const real = await realpath(path);
    return (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** What `/console` says when nothing was built: how to build it, not a crash. */
export function notBuiltMessage(dir: string): string {
  return `The ACMS console is not built: no index.html in ${dir}.\nBuild it with \`npm run build\` (or \`npm run build:console\`) in the server's folder, then reload.\n`;
}

function send(res: Response, req: Request, status: number, type: string, body: string | Buffer, cache: string): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  res.statusCode = status;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  res.setHeader("Content-Type", type);
  res.setHeader("Content-Length", String(bytes.length));
  res.setHeader("Cache-Control", cache);
  if (req.method === "HEAD") res.end();
  else res.end(bytes);
}
