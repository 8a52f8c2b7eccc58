import type { DescMethod, Message } from "@bufbuild/protobuf";
import type { ContextValues, Interceptor, StreamResponse, UnaryResponse } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import { Access } from "../../../gen/acms/v1/options_pb.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import type { ScopeStore } from "../../ports/scope-store.js";
import {
  accessRuleOf,
  checkPrincipalRefs,
  checkScopedRefs,
  LINK_WRITE_METHODS,
  requireWrite,
  resolveView,
  type AccessRule,
} from "./access-check.js";
import { narrowingIncludePathsKey, principalKey, requestIdKey, viewKey } from "./context-keys.js";
import { NarrowedViewCache } from "./narrowed-view-cache.js";
import { toConnectError, type InternalErrorSink } from "../transport/error-mapping.js";
import type { KeyRing } from "../../application/access/key-ring.js";
import type { Principal } from "../../domain/principal.js";
import { collectRefs } from "./request-refs.js";
import { principalOf } from "./early-authentication.js";
import { ScopeViewCache } from "./scope-view-cache.js";
import { withMessage } from "../transport/with-message.js";
import { viewWithout } from "../../domain/view-without.js";

/** What the access interceptor needs. */
export interface AccessDeps {
  keys: KeyRing;
  scopes: ScopeStore;
  registry: RegistryStore;
  /** Services answered without authentication (health). */
  publicServices: ReadonlySet<string>;
  /** Services answered on a valid key alone (reflection); any other method without an access option is refused. */
  authenticatedServices: ReadonlySet<string>;
  onInternalError?: InternalErrorSink;
  /** Resources being erased: left out of the views handed to the handlers (refs are still checked against the stored scope). */
  hidden?: ReadonlySet<string>;
}

/** Checks one request message: synchronously against a view, or with registry reads against the key. */
type Check = (m: Message) => void | Promise<void>;

async function* checkEach<T extends Message>(messages: AsyncIterable<T>, check: Check): AsyncIterable<T> {
  for await (const m of messages) {
    await check(m);
    yield m;
  }
}

async function* translateErrors<T>(messages: AsyncIterable<T>, sink?: InternalErrorSink): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw toConnectError(err, sink);
  }
}

/**
 * The one interceptor that guards every call: authenticates the key, resolves the `acms-scope` header
 * into a ScopedBackendView for methods marked `(acms.v1.access) = ACCESS_SCOPED`, and checks every field
 * marked `(acms.v1.ref)` of every request message (each message of a client stream as it arrives)
 * against the scope, or against the key's projects for unscoped methods. It also translates every error,
 * mid-stream ones too, into a ConnectError with protobuf details.
 */
export function createAccessInterceptor(deps: AccessDeps): Interceptor {
  const views = new ScopeViewCache(deps.scopes, { registry: deps.registry });
  const narrowed = new NarrowedViewCache();
  // A method's rule is fixed by its descriptor: read the option once per method, not once per call.
  const rules = new Map<DescMethod, AccessRule>();
  const ruleOf = (method: DescMethod): AccessRule => {
    let rule = rules.get(method);
    if (rule === undefined) rules.set(method, (rule = accessRuleOf(method, deps.authenticatedServices)));
    return rule;
  };
  // Internal errors are logged with the call's request id (set by the request-log interceptor).
  const sinkFor = (values: ContextValues): InternalErrorSink | undefined => {
    const sink = deps.onInternalError;
    return sink && ((err) => sink(err, values.get(requestIdKey)));
  };
  return (next) => async (req) => {
    try {
      if (deps.publicServices.has(req.service.typeName)) return await next(req);
      // The transport may have authenticated the header already, before reading the body (createBodyGate):
      // the same rule on the same key ring; a refusal found there is thrown here.
      const principal = principalOf(deps.keys, req.contextValues, req.header.get("authorization"));
      req.contextValues.set(principalKey, principal);
      const mode = ruleOf(req.method);
      if (mode === Access.WRITE) requireWrite(principal);
      let view: ScopedBackendView | undefined;
      if (mode === Access.SCOPED) {
        const resolved = resolveView(views, principal, req.header.get("acms-scope"));
        view = resolved instanceof Promise ? await resolved : resolved;
        // Extra include globs of an in-process MCP `search` (never from the wire): the scope, narrowed further.
        const include = req.contextValues.get(narrowingIncludePathsKey);
        if (include !== undefined && include.length > 0) view = narrowed.narrow(view, include, "include_paths");
        req.contextValues.set(viewKey, deps.hidden ? viewWithout(view, deps.hidden) : view);
      }
      const check = makeCheck(deps, req.method, mode, principal, view);
      let res: UnaryResponse | StreamResponse;
      if (!req.stream) {
        const checked = check(req.message);
        if (checked) await checked;
        res = await next(req);
      } else if (req.method.methodKind === "server_streaming") {
        const messages: Message[] = [];
        for await (const m of req.message) messages.push(m);
        for (const m of messages) await check(m);
        res = await next(withMessage(req, createAsyncIterable(messages)));
      } else {
        res = await next(withMessage(req, checkEach(req.message, check)));
      }
      if (res.stream) return withMessage(res, translateErrors(res.message, sinkFor(req.contextValues)));
      return res;
    } catch (err) {
      throw toConnectError(err, sinkFor(req.contextValues));
    }
  };
}

function makeCheck(
  deps: AccessDeps,
  method: DescMethod,
  mode: AccessRule,
  principal: Principal,
  view: ScopedBackendView | undefined,
): Check {
  const input = method.input;
  if (view) return (m) => checkScopedRefs(view, collectRefs(input, m));
  if (mode === Access.READ || mode === Access.WRITE) {
    // Resource ids of a link write are checked for reach, as a read's (see LINK_WRITE_METHODS).
    const write = mode === Access.WRITE && !LINK_WRITE_METHODS.has(`${method.parent.typeName}.${method.name}`);
    return (m) => checkPrincipalRefs(principal, deps.registry, collectRefs(input, m), write);
  }
  return () => undefined;
}
