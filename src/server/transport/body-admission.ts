import type http2 from "node:http2";
import type { ContextValues } from "@connectrpc/connect";
import { widenReceiveWindow } from "./receive-window.js";

/** How both transports (the gRPC fast path, connect-node) decide from a call's headers what to do with its body. */
export interface BodyAdmissionOptions {
  /**
   * Decides from the headers, before the body is read, whether a call's body may be read (the access room's
   * createBodyGate): a call it refuses has an empty message in place of its body, which is never read nor
   * decoded (nor decompressed), and the interceptors answer it (UNAUTHENTICATED). Absent: every body is read.
   */
  bodyGate?: (serviceTypeName: string, authorization: string | null, values: ContextValues) => boolean;
  /**
   * Whether a call whose body the gate let through proved a valid key (the access room's keyProven): its
   * HTTP/2 connection then gets the wider receive window (widenReceiveWindow). Absent: no connection widens.
   */
  keyProven?: (values: ContextValues) => boolean;
}

/**
 * Whether a call's body may be read (`bodyGate`); when it may and the call proved a key, its HTTP/2 connection
 * (`session`; undefined over HTTP/1.1) gets the wider receive window.
 */
export function admitBody(
  opts: BodyAdmissionOptions,
  serviceTypeName: string,
  authorization: string | null,
  values: ContextValues,
  session: http2.Http2Session | undefined,
): boolean {
  const mayRead = opts.bodyGate?.(serviceTypeName, authorization, values) ?? true;
  if (mayRead && session !== undefined && opts.keyProven?.(values)) widenReceiveWindow(session);
  return mayRead;
}
