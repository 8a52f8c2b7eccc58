import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import { ListProjectsResponseSchema } from "../../gen/acms/v1/registry_pb.js";
import { listAllProjects } from "../../clients/typescript/src/list-all.js";
import { collectAll } from "./collect-all.js";
import { outputWidth, type CliIo } from "./cli-io.js";
import type { ConnectedBody } from "./connection-options.js";
import { formatTable } from "./format-table.js";
import { printMessageJson } from "./print-json.js";

/** A timestamp as ISO 8601 in UTC, or `-` when the server sent none. */
export function isoTime(t: Timestamp | undefined): string {
  return t ? timestampDate(t).toISOString() : "-";
}

/** The body of `acms projects list`: every page of ListProjects, printed as one list. */
export const listProjects =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client }) => {
    const res = create(ListProjectsResponseSchema, { projects: await collectAll(listAllProjects(client, { pageSize: 1000 })) });
    if (conn.json) {
      printMessageJson(io, ListProjectsResponseSchema, res);
      return;
    }
    if (res.projects.length === 0) {
      io.stdout.write("no projects\n");
      return;
    }
    const rows = res.projects.map((p) => [p.name, isoTime(p.createdAt)]);
    io.stdout.write(formatTable(["PROJECT", "CREATED"], rows, outputWidth(io)));
  };
