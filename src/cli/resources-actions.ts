import { ListResourcesResponseSchema } from "../../gen/acms/v1/registry_pb.js";
import { outputWidth, type CliIo } from "./cli-io.js";
import type { ConnectedBody } from "./connection-options.js";
import { formatTable } from "./format-table.js";
import { printMessageJson } from "./print-json.js";

/** The body of `acms resources list`. */
export const listResources =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client, cmd }) => {
    const { project } = cmd.opts<{ project: string }>();
    const res = await client.registry.listResources({ project });
    if (conn.json) {
      printMessageJson(io, ListResourcesResponseSchema, res);
      return;
    }
    if (res.resources.length === 0) {
      io.stdout.write(`no resources in ${project}\n`);
      return;
    }
    const rows = res.resources.map((r) => [r.id, r.alias || "-", r.kind || "-", r.ownerProject, r.parentIds.join(",") || "-"]);
    io.stdout.write(formatTable(["RESOURCE", "ALIAS", "KIND", "OWNER", "PARENTS"], rows, outputWidth(io)));
  };
