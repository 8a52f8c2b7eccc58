import { RebuildResponseSchema } from "../../gen/acms/v1/index_pb.js";
import type { CliIo } from "./cli-io.js";
import type { ConnectedBody } from "./connection-options.js";
import { printMessageJson } from "./print-json.js";
import { resolveResource } from "./resolve-resource.js";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The body of `acms rebuild`. */
export const rebuild =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client, cmd }) => {
    const o = cmd.opts<{ resource: string[]; project?: string; full?: boolean }>();
    const resourceIds: string[] = [];
    for (const name of o.resource) resourceIds.push(await resolveResource(client, name, o.project));
    const res = await client.index.rebuild({ resourceIds, fullRebuild: o.full === true });
    if (conn.json) {
      printMessageJson(io, RebuildResponseSchema, res);
      return;
    }
    io.stdout.write(
      `${o.full ? "fully rebuilt" : "rebuilt"} ${plural(res.resourcesRebuilt, "resource", "resources")}, ` +
        `${plural(res.documentsReindexed, "document", "documents")} re-indexed; index generation ${res.indexGeneration}\n`,
    );
  };
