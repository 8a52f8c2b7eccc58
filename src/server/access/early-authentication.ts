import { createContextKey, type ContextValues } from "@connectrpc/connect";
import type { KeyRing } from "../../application/access/key-ring.js";
import { UnauthenticatedError } from "../../domain/errors.js";
import type { Principal } from "../../domain/principal.js";
import { authenticate } from "./access-check.js";

/** What the transport learned of a call's key from its headers, before reading its body. */
export type EarlyAuthentication = { principal: Principal } | { refusal: UnauthenticatedError };

/**
 * The call's early authentication, set by the transport (see createBodyGate) and read by the access
 * interceptor, which stays the one place that decides: it answers with the refusal found here, or takes the
 * principal found here instead of hashing the key again. Absent (in-memory router transports, or a
 * transport that does not gate): the interceptor authenticates the header itself.
 */
export const earlyAuthenticationKey = createContextKey<EarlyAuthentication | undefined>(undefined, {
  description: "acms early authentication",
});

/**
 * Decides from a call's headers whether its body may be read: false for a call the access interceptor will
 * refuse as UNAUTHENTICATED (no key, a malformed header, an unknown key), whose body the transport then never
 * reads nor decodes. Records what it found in `values` for the interceptor.
 */
export type BodyGate = (serviceTypeName: string, authorization: string | null, values: ContextValues) => boolean;

/**
 * The gate of every transport: the access rule itself (`authenticate`, the same KeyRing as the access
 * interceptor), run before the body instead of after it. Services answered without a key (health) pass.
 */
export function createBodyGate(keys: KeyRing, publicServices: ReadonlySet<string>): BodyGate {
  return (service, authorization, values) => {
    if (publicServices.has(service)) return true;
    try {
      values.set(earlyAuthenticationKey, { principal: authenticate(keys, authorization) });
      return true;
    } catch (err) {
      if (!(err instanceof UnauthenticatedError)) throw err;
      values.set(earlyAuthenticationKey, { refusal: err });
      return false;
    }
  };
}

/** The principal of a call: the one its transport found early, else its `authorization` header's (the same rule). */
export function principalOf(keys: KeyRing, values: ContextValues, authorization: string | null): Principal {
  const early = values.get(earlyAuthenticationKey);
  if (early === undefined) return authenticate(keys, authorization);
  if ("refusal" in early) throw early.refusal;
  return early.principal;
}

/**
 * Whether the transport's gate found a valid key for this call (not a public service, not a refusal): the
 * transports then give its HTTP/2 connection the wider receive window (see widenReceiveWindow).
 */
export function keyProven(values: ContextValues): boolean {
  const early = values.get(earlyAuthenticationKey);
  return early !== undefined && "principal" in early;
}
