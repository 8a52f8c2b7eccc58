import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
} from "@modelcontextprotocol/sdk/types.js";

/** A request's answer: its result or its error, under the id the client gave. */
export type JsonRpcAnswer = JSONRPCResultResponse | JSONRPCErrorResponse;

/**
 * An MCP transport that lets one long-lived MCP server answer the requests of every HTTP request at once:
 * each request enters under an id of its own (so two clients' equal ids never meet), with the caller's
 * context in its auth info, and its answer is handed back under the client's id. Building an MCP server per
 * HTTP request (the SDK's stateless pattern) costs milliseconds of schema set-up per call; this costs a map
 * entry. A request whose HTTP exchange ends first is cancelled (`notifications/cancelled`), which aborts its
 * handler's signal and so its RPCs. Messages the server starts itself (notifications, requests to the client)
 * have nowhere to go in a stateless exchange and are dropped.
 */
export class RequestMultiplexer implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly pending = new Map<string, (answer: JSONRPCMessage) => void>();
  private next = 0;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.pending.clear();
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const id = String(message.id);
    const deliver = this.pending.get(id);
    if (!deliver) return;
    this.pending.delete(id);
    deliver(message);
  }

  /** Hands `request` to the server as `authInfo`'s caller; resolves with its answer. `signal` cancels it. */
  request(request: JSONRPCRequest, authInfo: AuthInfo, signal: AbortSignal): Promise<JsonRpcAnswer> {
    const id = `m${++this.next}`;
    return new Promise((resolve) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        this.onmessage?.({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: "the HTTP exchange ended" },
        });
        resolve({ jsonrpc: "2.0", id: request.id, error: { code: -32800, message: "Request cancelled" } });
      };
      this.pending.set(id, (answer) => {
        signal.removeEventListener("abort", onAbort);
        resolve({ ...(answer as JsonRpcAnswer), id: request.id });
      });
      signal.addEventListener("abort", onAbort, { once: true });
      this.onmessage?.({ ...request, id }, { authInfo });
    });
  }

  /** Hands a client notification to the server (`notifications/initialized` and the like; nothing answers). */
  notify(notification: JSONRPCNotification, authInfo: AuthInfo): void {
    // A cancellation names the client's id of a request in another HTTP exchange: that exchange's end cancels it.
    if (notification.method === "notifications/cancelled") return;
    this.onmessage?.(notification, { authInfo });
  }
}
