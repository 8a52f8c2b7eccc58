import type { HandlerContext } from "@connectrpc/connect";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { principalKey, viewKey } from "./context-keys.js";
import type { Principal } from "../../domain/principal.js";

/** The call's principal; the access interceptor always sets it on authenticated methods. */
export function principalOf(ctx: HandlerContext): Principal {
  const p = ctx.values.get(principalKey);
  if (!p) throw new Error("no principal in context: the access interceptor did not run");
  return p;
}

/** The call's scoped view; the access interceptor sets it on every ACCESS_SCOPED method. */
export function viewOf(ctx: HandlerContext): ScopedBackendView {
  const v = ctx.values.get(viewKey);
  if (!v) throw new Error("no scoped view in context: the method is not marked ACCESS_SCOPED");
  return v;
}
