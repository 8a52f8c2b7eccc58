import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";

const actions = () => import("./resources-actions.js");

/**
 * `acms resources list --project P`: a project's resources with their alias there. The body is in
 * `resources-actions.ts`, loaded only when it runs. (Deleting a resource waits for the DeleteResource RPC.)
 */
export function resourcesCommand(io: CliIo): Command {
  const resources = new Command("resources").description("list a project's resources");
  addConnectionOptions(
    resources
      .command("list")
      .description("the resources linked into a project: id, alias there, kind, owner, parents")
      .requiredOption("--project <name>", "the project namespace/name"),
    { scoped: false },
  ).action(connectedAction(io, async () => (await actions()).listResources(io)));
  return resources;
}
