import { createClient } from "@connectrpc/connect";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService, type ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import { runTool, type ToolEnv } from "./run-tool.js";
import { scopeIdArg, toolOutput } from "./wire-shapes.js";

/** Pages of ListResources read per scope project at most (1,000 resources each). */
const MAX_PAGES = 100;

const scopeShape = {
  scope_id: z.string(),
  parent_scope_id: z.string().describe("the scope this one was narrowed from (empty for a resolved scope)"),
  project_names: z.array(z.string()),
  resource_ids: z.array(z.string()).describe("the effective resources: everything the scope may see"),
  include_paths: z.array(z.string()),
  exclude_paths: z.array(z.string()),
  temporal_scope: z.string(),
};

function scopeOut(s: ResourceScope | undefined) {
  return {
    scope_id: s?.scopeId ?? "",
    parent_scope_id: s?.parentScopeId ?? "",
    project_names: [...(s?.projectNames ?? [])],
    resource_ids: [...(s?.resourceIds ?? [])],
    include_paths: [...(s?.includePaths ?? [])],
    exclude_paths: [...(s?.excludePaths ?? [])],
    temporal_scope: s?.temporalScope ?? "",
  };
}

/** `list_resources` (GetScope, then ListResources of the scope's projects) and `narrow_scope` (NarrowScope). */
export function registerScopeTools(server: McpServer, env: ToolEnv): void {
  server.registerTool(
    "list_resources",
    {
      title: "List the resources in scope",
      description:
        "What this connection may see: the scope's projects and every resource in it (a repository, a docs site, a " +
        "dataset...) with its id, the project it is linked into, its alias there and its kind. Use the ids with " +
        "`narrow_scope` (deny_resource_ids) or to read `uko://<resource-id>/<path>` URIs.",
      inputSchema: { scope_id: scopeIdArg },
      outputSchema: toolOutput({
        scope_id: z.string(),
        project_names: z.array(z.string()),
        resources: z.array(
          z.object({
            resource_id: z.string(),
            project: z.string().describe("a scope project the resource is linked into (empty: in scope as a descendant only)"),
            alias: z.string().describe("its alias in that project"),
            kind: z.string(),
          }),
        ),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) => {
        const scope = (await createClient(ScopeService, call.transport).getScope({ scopeId: call.scopeId }, call.unscoped)).scope;
        const inScope = new Set(scope?.resourceIds ?? []);
        for (const denied of scope?.deniedResourceIds ?? []) inScope.delete(denied);
        const registry = createClient(RegistryService, call.transport);
        const found = new Map<string, { resource_id: string; project: string; alias: string; kind: string }>();
        for (const project of scope?.projectNames ?? []) {
          let pageToken = "";
          for (let page = 0; page < MAX_PAGES; page++) {
            const res = await registry.listResources({ project, pageSize: 1000, pageToken }, call.unscoped);
            for (const r of res.resources) {
              if (inScope.has(r.id) && !found.has(r.id)) found.set(r.id, { resource_id: r.id, project, alias: r.alias, kind: r.kind });
            }
            pageToken = res.nextPageToken;
            if (pageToken === "") break;
          }
        }
        const resources = [...inScope].sort().map((id) => found.get(id) ?? { resource_id: id, project: "", alias: "", kind: "" });
        return { scope_id: call.scopeId, project_names: [...(scope?.projectNames ?? [])], resources };
      }),
  );

  server.registerTool(
    "narrow_scope",
    {
      title: "Narrow the scope",
      description:
        "Make a smaller scope from the current one, to focus later calls: drop resources (deny_resource_ids), keep " +
        "only some of its projects (projects), or hide paths (exclude_paths, globs such as `**/test/**`). A scope can " +
        "only shrink: asking for anything the current scope lacks is refused. Pass the answered `scope_id` as " +
        "`scope_id` to later tools to run them under the narrower scope.",
      inputSchema: {
        deny_resource_ids: z.array(z.string()).optional().describe("resource ids to leave out (with their descendants)"),
        projects: z.array(z.string()).optional().describe("keep only these projects (a subset of the scope's)"),
        exclude_paths: z.array(z.string()).optional().describe("globs of document paths to hide"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput(scopeShape),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) => {
        const res = await createClient(ScopeService, call.transport).narrowScope(
          { denyResourceIds: args.deny_resource_ids ?? [], projects: args.projects ?? [], excludePaths: args.exclude_paths ?? [] },
          call.options,
        );
        return scopeOut(res.scope);
      }),
  );
}
