import { Command } from "commander";
import { processIo, type CliIo } from "./cli-io.js";
import { registerServeCommand } from "./serve.js";
import { fetchCommand } from "./fetch.js";
import { ingestCommand } from "./ingest.js";
import { keysCommand } from "./keys.js";
import { scopeCommand } from "./scope.js";
import { searchCommand } from "./search.js";
import { tiersCommand } from "./tiers.js";

/**
 * The `acms` command line: one file per subcommand, each adding itself here with its `register…Command`.
 * @example await createProgram().parseAsync(["node", "acms", "serve", "--port", "0"]);
 */
export function createProgram(io: CliIo = processIo()): Command {
  const program = new Command("acms")
    .description("ACMS context service: scoped full-text, vector and graph search plus tiered agent context over gRPC")
    .showHelpAfterError();
  registerServeCommand(program, io);
  program.addCommand(ingestCommand(io));
  program.addCommand(scopeCommand(io));
  program.addCommand(searchCommand(io));
  program.addCommand(fetchCommand(io));
  program.addCommand(tiersCommand(io));
  program.addCommand(keysCommand(io));
  return program;
}
