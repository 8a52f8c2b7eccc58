import { createContextKey } from "@connectrpc/connect";

/**
 * True on an RPC that an in-process front end made while serving a request it already admitted against the
 * principal's quotas (the MCP endpoint admits each JSON-RPC request once, then its tools' RPCs run under that
 * admission). The quota interceptor then spends no second admission (calls in flight, rate) on it, but still
 * holds it to the per-call cost budget (rows, bytes, time). Set only by the in-process transport
 * (src/server/mcp/in-process-transport.ts): no header or wire field reaches it.
 */
export const admittedUpstreamKey = createContextKey<boolean>(false, { description: "acms admitted upstream" });
