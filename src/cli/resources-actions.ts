import { create } from "@bufbuild/protobuf";
import { ListResourcesResponseSchema, UnlinkResourceResponseSchema } from "../../gen/acms/v1/registry_pb.js";
import { resolveResource } from "./resolve-resource.js";
import { listAllResources } from "../../clients/typescript/src/list-all.js";
import { collectAll } from "./collect-all.js";
import { outputWidth, type CliIo } from "./cli-io.js";
import type { ConnectedBody } from "./connection-options.js";
import { formatTable } from "./format-table.js";
import { printMessageJson } from "./print-json.js";

/** The body of `acms resources list`: every page of ListResources, printed as one list. */
export const listResources =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client, cmd }) => {
    const { project } = cmd.opts<{ project: string }>();
    const res = create(ListResourcesResponseSchema, { resources: await collectAll(listAllResources(client, project, { pageSize: 1000 })) });
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

/** The body of `acms unlink <project> <resource>`: the resource is an alias in that project or an id. */
export const unlinkResource =
  (io: CliIo): ConnectedBody<[string, string]> =>
  async ({ conn, client }, project, resource) => {
    const resourceId = await resolveResource(client, resource, project);
    const res = await client.registry.unlinkResource({ project, resourceId });
    if (conn.json) {
      printMessageJson(io, UnlinkResourceResponseSchema, res);
      return;
    }
    io.stdout.write(`unlinked ${resourceId} (alias "${res.link?.alias ?? ""}") from ${project}\n`);
  };
