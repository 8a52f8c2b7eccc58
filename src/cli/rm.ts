import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";

const actions = () => import("./rm-actions.js");

/**
 * `acms rm <resource-id|project:alias> [--yes]`: erase a resource everywhere it lives (DeleteResource).
 * Without `--yes` it only says what would go. The body is in `rm-actions.ts`, loaded only when it runs.
 */
export function rmCommand(io: CliIo): Command {
  return addConnectionOptions(
    new Command("rm")
      .description("erase a resource everywhere: links, documents and every version, chunks, vectors, triples, fragments")
      .argument("<resource>", "a resource id, or project:alias (e.g. local/api:docs)")
      .option("--yes", "erase it (without: only say what would go)"),
    { scoped: false },
  ).action(connectedAction(io, async () => (await actions()).removeResource(io)));
}

/** `acms projects rm <name> [--cascade] [--yes]`, added to `acms projects`. */
export function projectsRmCommand(io: CliIo): Command {
  return addConnectionOptions(
    new Command("rm")
      .description("delete a project (refused while it owns resources, unless --cascade erases them too)")
      .argument("<name>", "the project, namespace/name")
      .option("--cascade", "erase every resource the project owns first")
      .option("--yes", "delete it (without: only say what would go)"),
    { scoped: false },
  ).action(connectedAction(io, async () => (await actions()).removeProject(io)));
}
