import { Command } from "commander";
import type { CliIo } from "./cli-io.js";

/**
 * `acms mcp --scope <id>`: the MCP tools over stdio for desktop agents (an `mcpServers` entry runs it), each
 * tool forwarded as its RPC to a running server (`--url`/ACMS_URL, `--key`/ACMS_API_KEY). It never opens an
 * engine. Stdout carries the protocol only; failures go to stderr. The body is in `mcp-actions.ts`, loaded
 * only when it runs.
 */
export function mcpCommand(io: CliIo): Command {
  return new Command("mcp")
    .description("serve the MCP tools over stdio for a desktop agent, forwarding to a running server under --scope")
    .option("--url <url>", "server URL (env ACMS_URL; else http://ACMS_HOST:ACMS_PORT, default http://127.0.0.1:50051)")
    .option("--key <key>", "API key (env ACMS_API_KEY)")
    .option("--scope <scope-id>", "the scope every tool runs under (env ACMS_SCOPE)")
    .action(async (...args: unknown[]) => (await import("./mcp-actions.js")).serveMcp(io, args[args.length - 1] as Command));
}
