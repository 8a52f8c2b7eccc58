import { createContextKey } from "@connectrpc/connect";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import type { Principal } from "../../domain/principal.js";

/** The authenticated caller, set by the access interceptor on every call but health. */
export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "acms principal" });

/** The call's request id, set by the request-log interceptor (outermost) on every call, so errors are logged with it. */
export const requestIdKey = createContextKey<string | undefined>(undefined, { description: "acms request id" });

/** The call's scoped view, set by the access interceptor on every scoped call. */
export const viewKey = createContextKey<ScopedBackendView | undefined>(undefined, { description: "acms scoped view" });
