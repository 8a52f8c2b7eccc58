import { SearchResponseSchema, TextBackendService } from "../../gen/acms/v1/text_pb.js";
import type { CliIo } from "./cli-io.js";
import { requireScope, type ServiceBody } from "./connection-options.js";
import { parseIntFlag } from "./parse-numbers.js";
import { printMessageJson } from "./print-json.js";
import { printRanked } from "./print-ranked.js";

// `acms search text` in a module of its own: it loads the text service's code only (see serviceAction).

/** The body of `acms search text`, given the command's io. */
export const searchText =
  (io: CliIo): ServiceBody<[string[]]> =>
  async ({ conn, call, cmd }, words) => {
    requireScope(conn);
    const query = words.join(" ");
    const o = cmd.opts<{ maxResults?: string; groupByDocument?: boolean }>();
    const res = await call(TextBackendService.method.search, {
      query,
      maxResults: parseIntFlag("--max-results", o.maxResults),
      groupByDocument: o.groupByDocument === true,
    });
    if (conn.json) printMessageJson(io, SearchResponseSchema, res);
    else printRanked(io, res.results, query, res.exhaustive ? undefined : "(more results may match: raise --max-results)");
  };
