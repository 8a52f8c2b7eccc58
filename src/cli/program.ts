import { Command } from "commander";
import { processIo, type CliIo } from "./cli-io.js";
import { fetchCommand } from "./fetch.js";
import { ingestCommand } from "./ingest.js";
import { keysCommand } from "./keys.js";
import { mcpCommand } from "./mcp.js";
import { rmCommand } from "./rm.js";
import { projectsCommand } from "./projects.js";
import { rebuildCommand } from "./rebuild.js";
import { resourcesCommand } from "./resources.js";
import { scopeCommand } from "./scope.js";
import { searchCommand } from "./search.js";
import { registerServeCommand } from "./serve-command.js";
import { tiersCommand } from "./tiers.js";
import { triplesCommand } from "./triples.js";
import { scopesCommand } from "./scopes.js";
import { unlinkCommand } from "./unlink.js";

/** What the program says about itself. */
export interface ProgramInfo {
  /** The package version, for `acms --version` (see `package-version.ts`). */
  version?: string;
}

/**
 * The `acms` command line: one file per subcommand, each adding itself here with its `register…Command`.
 * Those files hold only the commander definitions (flags, help); each action imports its module when it runs,
 * so `acms --help` loads commander alone and `acms search text` loads the client, never the server.
 * @example await createProgram().parseAsync(["node", "acms", "serve", "--port", "0"]);
 */
export function createProgram(io: CliIo = processIo(), info: ProgramInfo = {}): Command {
  const program = new Command("acms")
    .description("ACMS context service: scoped full-text, vector and graph search plus tiered agent context over gRPC")
    .showHelpAfterError();
  if (info.version) program.version(info.version, "-V, --version", "print the acms version");
  registerServeCommand(program, io);
  program.addCommand(ingestCommand(io));
  program.addCommand(scopeCommand(io));
  program.addCommand(searchCommand(io));
  program.addCommand(fetchCommand(io));
  program.addCommand(tiersCommand(io));
  program.addCommand(projectsCommand(io));
  program.addCommand(resourcesCommand(io));
  program.addCommand(triplesCommand(io));
  program.addCommand(rebuildCommand(io));
  program.addCommand(keysCommand(io));
  program.addCommand(scopesCommand(io));
  program.addCommand(unlinkCommand(io));
  program.addCommand(mcpCommand(io));
  program.addCommand(rmCommand(io));
  return program;
}
