import type { Interceptor } from "@connectrpc/connect";

/**
 * An interceptor that sets the `authorization` and `acms-scope` headers the server reads, so no call site
 * has to remember them. Works with every transport (Node and browser).
 */
export function acmsHeadersInterceptor(apiKey: string | undefined, scopeId: string | undefined): Interceptor {
  return (next) => async (req) => {
    if (apiKey !== undefined && apiKey !== "") req.header.set("authorization", `Bearer ${apiKey}`);
    if (scopeId !== undefined && scopeId !== "") req.header.set("acms-scope", scopeId);
    return next(req);
  };
}
