import { createContextKey } from "@connectrpc/connect";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { Principal } from "../../domain/principal.js";

/** The authenticated caller, set by the access interceptor on every call but health. */
export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "acms principal" });

/** The call's request id, set by the request-log interceptor (outermost) on every call, so errors are logged with it. */
export const requestIdKey = createContextKey<string | undefined>(undefined, { description: "acms request id" });

/** The call's scoped view, set by the access interceptor on every scoped call. */
export const viewKey = createContextKey<ScopedBackendView | undefined>(undefined, { description: "acms scoped view" });

/**
 * Path globs that narrow the call's scope further (a path must also match one of them), set only by the
 * in-process transport of the MCP tools (`search`'s `include_paths`): the access interceptor intersects the
 * scope's view with them. No header or wire field reaches it: a remote client cannot set it.
 */
export const narrowingIncludePathsKey = createContextKey<readonly string[] | undefined>(undefined, {
  description: "acms in-process include-path narrowing",
});
