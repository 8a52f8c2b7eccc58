import { processIo } from "./cli-io.js";
import { packageVersion } from "./package-version.js";
import { createProgram } from "./program.js";

// The process entry point (`npm start`, `npx acms`): parse argv and run the subcommand.
createProgram(processIo(), { version: packageVersion(import.meta.url) })
  .parseAsync(process.argv)
  .catch(async (err: unknown) => {
    const { formatCliError } = await import("./cli-error.js");
    process.stderr.write(`${formatCliError(err)}\n`);
    process.exitCode = 1;
  });
