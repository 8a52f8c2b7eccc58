export { createAcmsMcpServer, ACMS_MCP_TOOLS } from "./acms-mcp-server.js";
export type { McpCallContext } from "./mcp-call-context.js";
export { ScopeLineage } from "./scope-lineage.js";
export type { ToolExtra } from "./run-tool.js";
