import { FetchContentResponseSchema } from "../../gen/acms/v1/rag_pb.js";
import type { CliIo } from "./cli-io.js";
import { requireScope, type ConnectedBody } from "./connection-options.js";
import { printMessageJson } from "./print-json.js";

/** The body of `acms fetch`: each unit under a `==> uri <==` header; missing URIs on stderr, exit status 2. */
export const fetchContent =
  (io: CliIo): ConnectedBody<[string[]]> =>
  async ({ conn, client }, uris) => {
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
  };
