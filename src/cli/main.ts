import { formatCliError } from "./cli-error.js";
import { createProgram } from "./program.js";

// The process entry point (`npm start`, `npx acms`): parse argv and run the subcommand.
createProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    process.stderr.write(`${formatCliError(err)}\n`);
    process.exitCode = 1;
  });
