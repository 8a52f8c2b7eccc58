import type { AcmsClient } from "../client/create-acms-client.js";
import { isUlid } from "../domain/ulid-id.js";
import { CliUsageError } from "./cli-usage-error.js";

/**
 * The resource id behind `--resource`: with `--project`, an alias in that project or an id linked into it
 * (ResolveAlias answers, NOT_FOUND when neither); without, it must be a resource id (ULID).
 */
export async function resolveResource(client: AcmsClient, name: string, project: string | undefined): Promise<string> {
  if (project !== undefined) return (await client.registry.resolveAlias({ project, aliasOrId: name })).resourceId;
  if (!isUlid(name)) throw new CliUsageError(`--resource "${name}" is not a resource id (ULID); pass --project to use an alias`);
  return name;
}
