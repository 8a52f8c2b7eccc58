import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";

const actions = () => import("./rebuild-actions.js");

/**
 * `acms rebuild --resource <id> [--full]`: re-index resources (the Rebuild RPC). The body is in
 * `rebuild-actions.ts`, loaded only when it runs.
 */
export function rebuildCommand(io: CliIo): Command {
  return addConnectionOptions(
    new Command("rebuild")
      .description("re-index resources from their stored documents: upsert only, or wipe and re-index with --full")
      .requiredOption(
        "--resource <id|alias>",
        "the resource: an id, or an alias of --project (repeatable)",
        // No default: an empty list would ask the server to rebuild every resource the key may write.
        (v: string, p: string[] | undefined) => [...(p ?? []), v],
      )
      .option("--project <name>", "the project whose aliases --resource names")
      .option("--full", "wipe the resources' indexes and re-index them (default: upsert only, never drops state)"),
    { scoped: false },
  ).action(connectedAction(io, async () => (await actions()).rebuild(io)));
}
