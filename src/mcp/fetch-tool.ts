import { createClient } from "@connectrpc/connect";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { runTool, type ToolEnv } from "./run-tool.js";
import { indexGeneration, metadataShape, scopeIdArg, scopedAnswer, toolOutput } from "./wire-shapes.js";

export const fetchedItemShape = z.object({
  uko_uri: z.string(),
  resource_id: z.string(),
  path: z.string(),
  content: z.string(),
  metadata: metadataShape,
  chunk_index: z.number().optional().describe("present when the URI named one chunk (`#<index>`)"),
});

/** `fetch`: FetchContent, the full text of documents or chunks by UKO URI, in the order asked. */
export function registerFetchTool(server: McpServer, env: ToolEnv): void {
  server.registerTool(
    "fetch",
    {
      title: "Read documents or chunks by UKO URI",
      description:
        "Read the full content of units found by `search`: give their `uko_uri`s (`uko://<resource-id>/<path>` for a " +
        "whole document, `uko://<resource-id>/<path>#<chunk-index>` for one chunk). `items` answers one entry per URI " +
        "found, in exactly the order asked (a URI asked twice appears twice); `missing` lists URIs of in-scope " +
        "resources that hold no such unit. A URI of a resource outside the scope is refused.",
      inputSchema: {
        uko_uris: z.array(z.string()).describe("the UKO URIs to read, in the order wanted"),
        scope_id: scopeIdArg,
      },
      outputSchema: toolOutput({
        items: z.array(fetchedItemShape),
        missing: z.array(z.string()),
        ...scopedAnswer,
        index_generation: indexGeneration,
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(env, args.scope_id, extra, async (call) => {
        const res = await createClient(RagService, call.transport).fetchContent({ ukoUris: args.uko_uris }, call.options);
        return {
          items: res.items.map((i) => ({
            uko_uri: i.ukoUri,
            resource_id: i.resourceId,
            path: i.path,
            content: i.content,
            metadata: { ...i.metadata },
            ...(i.chunkIndex !== undefined ? { chunk_index: i.chunkIndex } : {}),
          })),
          missing: [...res.missing],
          scope_id: res.scopeId,
          exhaustive: res.exhaustive,
          index_generation: Number(res.indexGeneration),
        };
      }),
  );
}
