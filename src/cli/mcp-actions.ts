import type { Command } from "commander";
import { createConnectTransport } from "@connectrpc/connect-node";
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
      const ctx = { transport, authorization: `Bearer ${conn.key}`, scopeId };
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
