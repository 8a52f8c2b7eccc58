import type { Command } from "commander";
import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createAcmsMcpServer, ScopeLineage } from "../mcp/index.js";
import type { CliIo } from "./cli-io.js";
import { runGuarded } from "./cli-error.js";
import { CliUsageError } from "./cli-usage-error.js";
import { connectionOf, requireScope } from "./connection-options.js";
import { packageVersion } from "./package-version.js";

/**
 * Serves MCP on stdin/stdout until stdin ends: the same tools as POST /mcp, each call an RPC to the server at
 * the connection's URL with its key and scope (Connect over HTTP/1.1, so an idle agent holds no HTTP/2 session).
 * A usage problem (no key, no scope, a bad URL) is one line on stderr and exit status 1, before any protocol.
 */
export async function serveMcp(io: CliIo, cmd: Command): Promise<void> {
  let url: string | undefined;
  await runGuarded(
    io,
    () => url,
    async () => {
      const conn = connectionOf(cmd, io);
      url = conn.url;
      if (!conn.key) throw new CliUsageError("no API key: pass --key or set ACMS_API_KEY (make one with `acms keys create`)");
      const scopeId = requireScope(conn);
      const transport = createConnectTransport({ baseUrl: conn.url, httpVersion: "1.1" });
      const authorization = `Bearer ${conn.key}`;
      const ctx = { transport, authorization, scopeId, forwardTool: forwardToEndpoint(conn.url, authorization, scopeId) };
      const server = createAcmsMcpServer(() => ctx, new ScopeLineage(), packageVersion(import.meta.url) ?? "0.0.0");
      const ended = new Promise<void>((resolve) => {
        process.stdin.once("end", resolve);
        process.stdin.once("close", resolve);
      });
      await server.connect(new StdioServerTransport());
      await ended;
      await server.close();
    },
  );
}

/**
 * Runs a tool on the server's own MCP endpoint (`POST <url>/mcp`, one stateless JSON-RPC request with the same
 * key and scope), for what the server does in process and a network client cannot ask of the RPCs: `search`
 * with `include_paths` narrows the scope inside the RPC's access check there. The tool's result comes back as
 * it is; a failure of the exchange itself is an error of its HTTP status (401, 429, else UNAVAILABLE).
 */
function forwardToEndpoint(url: string, authorization: string, scopeId: string) {
  return async (name: string, args: Record<string, unknown>, meta: Record<string, unknown> | undefined, signal?: AbortSignal) => {
    const trace: Record<string, unknown> = {};
    if (typeof meta?.traceparent === "string") trace.traceparent = meta.traceparent;
    if (typeof meta?.tracestate === "string") trace.tracestate = meta.tracestate;
    const res = await fetch(`${url.replace(/\/+$/, "")}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization, "acms-scope": scopeId },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name, arguments: args, ...(Object.keys(trace).length > 0 ? { _meta: trace } : {}) },
      }),
      signal,
    });
    const text = await res.text();
    let answer: { result?: CallToolResult; error?: { message?: string } } = {};
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      // Not JSON: reported by its status below.
    }
    if (answer.result) return answer.result;
    const code = res.status === 401 ? Code.Unauthenticated : res.status === 429 ? Code.ResourceExhausted : Code.Unavailable;
    throw new ConnectError(answer.error?.message ?? `the server's MCP endpoint answered HTTP ${res.status}`, code);
  };
}
