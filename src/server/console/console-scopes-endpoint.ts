import type http from "node:http";
import type http2 from "node:http2";
import { UnauthenticatedError } from "../../domain/errors.js";
import type { ResourceScope } from "../../domain/scope.js";
import { isUlid } from "../../domain/ulid-id.js";
import { MAX_SCOPE_PAGE, type ScopeStore } from "../../ports/scope-store.js";
import { authenticate } from "../access/access-check.js";
import type { KeyRing } from "../../application/access/key-ring.js";
import type { QuotaLedger } from "../quotas/quota-ledger.js";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;

/** Where the console asks for the stored scopes of its key (under /console: never an RPC path). */
export const CONSOLE_SCOPES_PATH = "/console/api/scopes";

/** Scopes per page when the page asks for no size. */
const DEFAULT_PAGE_SIZE = 20;

/** One stored scope as the console lists it: what GetScope answers, less the resource ids (only their count). */
export interface ConsoleScopeSummary {
  scopeId: string;
  projectNames: readonly string[];
  resourceCount: number;
  temporalScope: string;
  includeResources: readonly string[];
  excludeResources: readonly string[];
  includePaths: readonly string[];
  excludePaths: readonly string[];
  parentScopeId: string;
  expandDescendants: boolean;
  /** ISO 8601. */
  createdAt: string;
}

/** The JSON answer of GET {@link CONSOLE_SCOPES_PATH}. */
export interface ConsoleScopesPage {
  scopes: ConsoleScopeSummary[];
  /** Empty on the last page; otherwise pass as `page_token` for the next one. */
  nextPageToken: string;
}

/** What the endpoint needs: the same key ring, scope store and quota ledger the RPCs use. */
export interface ConsoleScopesDeps {
  keys: KeyRing;
  scopes: ScopeStore;
  /** The RPCs' ledger: a console request spends the principal's calls in flight and rate like any call. */
  quotas: QuotaLedger;
}

/**
 * GET /console/api/scopes?page_size=N&page_token=T: the stored scopes of the caller's key, newest first, a
 * page at a time. The wire contract has GetScope but no RPC that lists scopes, and its RPC names are fixed,
 * so the console gets this JSON endpoint on its own path instead. It authenticates exactly as the RPCs do
 * (`authorization: Bearer <key>`; none or an unknown key is 401) and lists only scopes owned by that key's
 * principal, straight from the scope store's owner index: another principal's scope can never appear, and
 * a page token is just a scope id to list below. Bad paging input is 400; answers are never cached. It
 * counts against the principal's quotas exactly as an RPC does (calls in flight, rate, answer bytes): over
 * them is 429 with `Retry-After`, RESOURCE_EXHAUSTED's HTTP status.
 */
export function createConsoleScopesEndpoint(deps: ConsoleScopesDeps): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    if (req.method !== "GET") {
      res.setHeader("Allow", "GET");
      return sendJson(res, 405, errorBody("method_not_allowed", "GET only"));
    }
    let owner: string;
    try {
      owner = authenticate(deps.keys, headerOf(req, "authorization")).name;
    } catch (err) {
      if (!(err instanceof UnauthenticatedError)) throw err;
      res.setHeader("WWW-Authenticate", 'Bearer realm="acms"');
      return sendJson(res, 401, errorBody("unauthenticated", err.message));
    }
    const admitted = deps.quotas.admit(owner);
    if ("reason" in admitted) {
      res.setHeader("Retry-After", String(Math.max(1, Math.ceil(admitted.retryAfterMs / 1000))));
      return sendJson(res, 429, errorBody("resource_exhausted", `Over quota: ${admitted.reason}; retry in ${admitted.retryAfterMs} ms`));
    }
    try {
      await listPage(deps, owner, req, res);
    } finally {
      admitted.release();
    }
  };
}

async function listPage(deps: ConsoleScopesDeps, owner: string, req: Request, res: Response): Promise<void> {
  const query = new URL(req.url ?? "/", "http://console.invalid").searchParams;
  const size = query.get("page_size") ?? String(DEFAULT_PAGE_SIZE);
  if (!/^\d{1,3}$/.test(size) || Number(size) < 1 || Number(size) > MAX_SCOPE_PAGE) {
    return sendJson(res, 400, errorBody("invalid_argument", `page_size must be a whole number from 1 to ${MAX_SCOPE_PAGE}`));
  }
  const token = query.get("page_token") ?? "";
  if (token !== "" && !isUlid(token))
    return sendJson(res, 400, errorBody("invalid_argument", "page_token must be the nextPageToken of a previous page"));
  const page = await deps.scopes.listByOwner(owner, { limit: Number(size), before: token === "" ? undefined : token });
  const body: ConsoleScopesPage = { scopes: page.scopes.map(summary), nextPageToken: page.next ?? "" };
  const bytes = Buffer.from(JSON.stringify(body));
  const budget = deps.quotas.limits.resultBytes;
  if (bytes.length > budget) {
    res.setHeader("Retry-After", "1");
    return sendJson(
      res,
      429,
      errorBody("resource_exhausted", `the answer exceeds the per-call budget of ${budget} bytes: ask for a smaller page_size`),
    );
  }
  sendBytes(res, 200, bytes);
}

function summary(s: ResourceScope): ConsoleScopeSummary {
  return {
    scopeId: s.scopeId,
    projectNames: s.projectNames,
    resourceCount: s.resourceIds.length,
    temporalScope: s.temporalScope,
    includeResources: s.includeResources,
    excludeResources: s.excludeResources,
    includePaths: s.includePaths,
    excludePaths: s.excludePaths,
    parentScopeId: s.parentScopeId,
    expandDescendants: s.expandDescendants,
    createdAt: s.createdAt.toISOString(),
  };
}

function headerOf(req: Request, name: string): string | null {
  const value = req.headers[name];
  return typeof value === "string" ? value : null;
}

function errorBody(code: string, message: string): { code: string; message: string } {
  return { code, message };
}

function sendJson(res: Response, status: number, body: unknown): void {
  sendBytes(res, status, Buffer.from(JSON.stringify(body)));
}

function sendBytes(res: Response, status: number, bytes: Buffer): void {
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", String(bytes.length));
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.end(bytes);
}
