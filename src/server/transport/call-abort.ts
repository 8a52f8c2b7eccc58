import { createContextKey, type ConnectError } from "@connectrpc/connect";

/**
 * A call's own signal with the means to abort it, as the transport that made it offers them (the gRPC fast path
 * does): an interceptor that must abort the handler's work (the quota's time budget) aborts this signal when the
 * request it was handed still carries it, rather than making a controller of its own that follows it (a
 * second AbortController and a listener added and removed on every call that reads its signal).
 */
export interface CallAbort {
  readonly signal: AbortSignal;
  abort(reason: ConnectError): void;
}

/** The call's CallAbort, in its context values; undefined on transports that offer none. */
export const callAbortKey = createContextKey<CallAbort | undefined>(undefined, { description: "acms call abort" });
