import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";

const actions = () => import("./resources-actions.js");

/**
 * `acms unlink <project> <resource>`: removes a resource's link (and its alias) from a project that does not
 * own it; scopes stop reaching the resource through that project at once. The body is in `resources-actions.ts`.
 */
export function unlinkCommand(io: CliIo): Command {
  return addConnectionOptions(
    new Command("unlink")
      .description("remove a resource's link from a project that does not own it (the owner's link goes only with the resource)")
      .argument("<project>", "the project namespace/name holding the link")
      .argument("<resource>", "the resource: its alias in that project, or its id"),
    { scoped: false },
  ).action(connectedAction(io, async () => (await actions()).unlinkResource(io)));
}
