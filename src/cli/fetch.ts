import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";

/**
 * `acms fetch <uri...>`: the content of documents or chunks by UKO URI, in the order asked, each under a
 * `==> uri <==` header; URIs the scope holds no unit for are listed on stderr and make the exit status 2.
 * The body is in `fetch-action.ts`, loaded only when it runs.
 */
export function fetchCommand(io: CliIo): Command {
  return addConnectionOptions(
    new Command("fetch")
      .description("print the content of documents or chunks by UKO URI, in the order given")
      .argument("<uko-uri...>", "uko://<resource-id>/<path>[#<chunk>]"),
    { scoped: true },
  ).action(connectedAction(io, async () => (await import("./fetch-action.js")).fetchContent(io)));
}
