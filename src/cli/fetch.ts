import { Command } from "commander";
import { FetchContentResponseSchema } from "../../gen/acms/v1/rag_pb.js";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction, requireScope } from "./connection-options.js";
import { printMessageJson } from "./print-json.js";

/**
 * `acms fetch <uri...>`: the content of documents or chunks by UKO URI, in the order asked, each under a
 * `==> uri <==` header; URIs the scope holds no unit for are listed on stderr and make the exit status 2.
 */
export function fetchCommand(io: CliIo): Command {
  return addConnectionOptions(
    new Command("fetch")
      .description("print the content of documents or chunks by UKO URI, in the order given")
      .argument("<uko-uri...>", "uko://<resource-id>/<path>[#<chunk>]"),
    { scoped: true },
  ).action(
    connectedAction(io, async ({ conn, client }, uris: string[]) => {
      requireScope(conn);
      const res = await client.rag.fetchContent({ ukoUris: uris });
      if (conn.json) printMessageJson(io, FetchContentResponseSchema, res);
      else {
        for (const item of res.items) {
          io.stdout.write(`==> ${item.ukoUri} <==\n${item.content}${item.content.endsWith("\n") ? "" : "\n"}`);
        }
      }
      if (res.missing.length > 0) {
        io.stderr.write(`acms: not_found: no such unit in scope: ${res.missing.join(", ")}\n`);
        io.setExitCode(2);
      }
    }),
  );
}
