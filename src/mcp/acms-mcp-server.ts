import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { registerFetchTool } from "./fetch-tool.js";
import { registerGraphTools } from "./graph-tools.js";
import type { McpCallContext } from "./mcp-call-context.js";
import { registerMemoryTools } from "./memory-tools.js";
import type { ScopeLineage } from "./scope-lineage.js";
import { registerScopeTools } from "./scope-tools.js";
import { registerSearchTool } from "./search-tool.js";
import { registerUkoResources } from "./uko-resources.js";
import type { ToolExtra } from "./run-tool.js";

/** The names of the tools, as API.md fixes them. */
export const ACMS_MCP_TOOLS = [
  "search",
  "fetch",
  "sparql",
  "get_triples",
  "traverse",
  "list_resources",
  "narrow_scope",
  "remember",
  "recall",
  "forget",
] as const;

const INSTRUCTIONS =
  "ACMS gives you scoped access to indexed knowledge (code, docs, datasets) and a shared, tiered memory. Everything " +
  "runs under one scope fixed by the connection: start with `list_resources` to see what is in it, `search` to find " +
  "passages, `fetch` (or reading a uko:// resource) for full text, `sparql` / `get_triples` / `traverse` for the " +
  "knowledge graph, `remember` / `recall` / `forget` for context that should outlive this conversation. " +
  "`narrow_scope` makes a smaller scope whose id later tools accept as `scope_id`. Anything outside the scope is " +
  "refused with an error naming the offending resources or projects.";

/**
 * One MCP server over the ACMS RPCs: the ten tools and UKO resources, each a thin translation onto the RPC it
 * maps to, called over the request's context (`contextOf(extra)`: its transport, the caller's key and scope).
 * The transport decides where the calls go (the server's own router in process, or a running server over the
 * network for `acms mcp`); the tools are the same either way. One server answers any number of requests,
 * concurrently: nothing of a caller is kept in it.
 * @example const ctx = { transport, authorization: `Bearer ${key}`, scopeId };
 *          await createAcmsMcpServer(() => ctx, new ScopeLineage(), "0.1.0").connect(new StdioServerTransport());
 */
export function createAcmsMcpServer(contextOf: (extra: ToolExtra) => McpCallContext, lineage: ScopeLineage, version: string): McpServer {
  const server = new McpServer({ name: "acms", title: "ACMS context service", version }, { instructions: INSTRUCTIONS });
  const env = { contextOf, lineage };
  registerSearchTool(server, env);
  registerFetchTool(server, env);
  registerGraphTools(server, env);
  registerScopeTools(server, env);
  registerMemoryTools(server, env);
  registerUkoResources(server, env);
  return server;
}
