import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";
import { projectsRmCommand } from "./rm.js";

const actions = () => import("./projects-actions.js");

/**
 * `acms projects list`: the projects the key may see. The body is in `projects-actions.ts`, loaded only when
 * it runs.
 */
export function projectsCommand(io: CliIo): Command {
  const projects = new Command("projects").description("list the projects the key may see");
  addConnectionOptions(projects.command("list").description("list the projects the key may see, by name"), { scoped: false }).action(
    connectedAction(io, async () => (await actions()).listProjects(io)),
  );
  projects.addCommand(projectsRmCommand(io));
  return projects;
}
