import { DeleteProjectResponseSchema, DeleteResourceResponseSchema, type ErasureReport } from "../../gen/acms/v1/registry_pb.js";
import type { AcmsClient } from "../client/create-acms-client.js";
import { isUlid } from "../domain/ulid-id.js";
import type { CliIo } from "./cli-io.js";
import { CliUsageError } from "./cli-usage-error.js";
import type { ConnectedBody } from "./connection-options.js";
import { printMessageJson } from "./print-json.js";

/** The report as one line per kind. */
function reportLines(r: ErasureReport | undefined): string {
  if (!r) return "";
  const kinds: Array<[string, bigint]> = [
    ["documents (every version)", r.documents],
    ["chunks", r.chunks],
    ["vectors", r.vectors],
    ["triples", r.triples],
    ["fragments", r.fragments],
    ["links", r.links],
    ["files", r.files],
  ];
  return `${kinds.map(([k, n]) => `  ${k}: ${n}`).join("\n")}\n  index generation: ${r.indexGeneration}\n`;
}

/** The id behind `<resource>`: a ULID as it is, `project:alias` resolved in that project. */
async function resourceIdOf(client: AcmsClient, name: string): Promise<string> {
  const colon = name.lastIndexOf(":");
  if (colon > 0)
    return (await client.registry.resolveAlias({ project: name.slice(0, colon), aliasOrId: name.slice(colon + 1) })).resourceId;
  if (!isUlid(name)) throw new CliUsageError(`"${name}" is neither a resource id (ULID) nor project:alias`);
  return name;
}

/** What the resource is, as the key sees it: its kind and every link (project:alias), for the confirmation. */
async function describe(client: AcmsClient, id: string): Promise<string> {
  for (const p of (await client.registry.listProjects({})).projects) {
    const r = (await client.registry.listResources({ project: p.name })).resources.find((x) => x.id === id);
    if (r) {
      const links = r.links.map((l) => `${l.project}:${l.alias}`).join(", ");
      return `resource ${id} (${r.kind || "no kind"}; owned by ${r.ownerProject || "another project"}; linked as ${links})`;
    }
  }
  return `resource ${id}`;
}

/** The body of `acms rm`. */
export const removeResource =
  (io: CliIo): ConnectedBody<[string]> =>
  async ({ conn, client, cmd }, name) => {
    const o = cmd.opts<{ yes?: boolean }>();
    const id = await resourceIdOf(client, name);
    if (!o.yes) {
      io.stdout.write(
        `would erase ${await describe(client, id)}: its links and aliases in every project, every document version, chunk, ` +
          `vector and triple, and the tier fragments naming it. Nothing is erased without --yes.\n`,
      );
      io.setExitCode(1);
      return;
    }
    const res = await client.registry.deleteResource({ resourceId: id });
    if (conn.json) {
      printMessageJson(io, DeleteResourceResponseSchema, res);
      return;
    }
    io.stdout.write(`erased resource ${id}:\n${reportLines(res.report)}`);
  };

/** The body of `acms projects rm`. */
export const removeProject =
  (io: CliIo): ConnectedBody<[string]> =>
  async ({ conn, client, cmd }, name) => {
    const o = cmd.opts<{ yes?: boolean; cascade?: boolean }>();
    if (!o.yes) {
      const owned = (await client.registry.listResources({ project: name })).resources.filter((r) => r.ownerProject === name);
      const what =
        owned.length === 0
          ? "it owns no resource"
          : o.cascade
            ? `and erase the ${owned.length} resource(s) it owns: ${owned.map((r) => `${r.alias} (${r.id})`).join(", ")}`
            : `it owns ${owned.length} resource(s), so it is refused without --cascade`;
      io.stdout.write(`would delete project ${name} (${what}), with every link into it. Nothing is deleted without --yes.\n`);
      io.setExitCode(1);
      return;
    }
    const res = await client.registry.deleteProject({ name, cascade: o.cascade === true });
    if (conn.json) {
      printMessageJson(io, DeleteProjectResponseSchema, res);
      return;
    }
    const ids = res.report?.resourceIds ?? [];
    io.stdout.write(`deleted project ${name}${ids.length > 0 ? ` and erased ${ids.join(", ")}` : ""}:\n${reportLines(res.report)}`);
  };
