import { create } from "@bufbuild/protobuf";
import { ListScopesResponseSchema } from "../../gen/acms/v1/scope_pb.js";
import { listAllScopes } from "../../clients/typescript/src/list-all.js";
import { outputWidth, type CliIo } from "./cli-io.js";
import type { ConnectedBody } from "./connection-options.js";
import { formatTable } from "./format-table.js";
import { printMessageJson } from "./print-json.js";
import { collectAll } from "./collect-all.js";
import { isoTime } from "./projects-actions.js";

/** The body of `acms scopes list`: every page of ListScopes (newest first), printed as one list. */
export const listScopes =
  (io: CliIo): ConnectedBody<[]> =>
  async ({ conn, client }) => {
    const res = create(ListScopesResponseSchema, { scopes: await collectAll(listAllScopes(client, { pageSize: 1000 })) });
    if (conn.json) {
      printMessageJson(io, ListScopesResponseSchema, res);
      return;
    }
    if (res.scopes.length === 0) {
      io.stdout.write("no scopes\n");
      return;
    }
    const rows = res.scopes.map((s) => [
      s.scopeId,
      isoTime(s.createdAt),
      s.projectNames.join(","),
      String(s.resourceIds.length),
      s.temporalScope || "current",
      s.parentScopeId || "-",
    ]);
    io.stdout.write(formatTable(["SCOPE", "CREATED", "PROJECTS", "RESOURCES", "TEMPORAL", "PARENT"], rows, outputWidth(io)));
  };
