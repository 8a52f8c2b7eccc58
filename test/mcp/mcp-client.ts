import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** The official TypeScript SDK client, connected to `url`/mcp with a key and a scope as an MCP client config holds them. */
export async function connectMcp(url: string, key: string, scopeId: string, extraHeaders: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "acms-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, "acms-scope": scopeId, ...extraHeaders } },
  });
  await client.connect(transport);
  return client;
}

/** Calls `name` and answers the result as a CallToolResult. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;
}

/** The structured content of a result that must have succeeded (its text shown when it did not). */
export function ok<T = Record<string, unknown>>(r: CallToolResult): T {
  if (r.isError) throw new Error(`tool failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent as T;
}

/** The structured content of a refusal (`isError` with code PERMISSION_DENIED). */
export function refused(r: CallToolResult): {
  code: string;
  resource_ids: string[];
  project_names: string[];
  scope_project_names: string[];
} {
  expect({ isError: r.isError, code: (r.structuredContent as { code?: string } | undefined)?.code, text: r.content }).toMatchObject({
    isError: true,
    code: "PERMISSION_DENIED",
  });
  return r.structuredContent as { code: string; resource_ids: string[]; project_names: string[]; scope_project_names: string[] };
}
