import type { Project, Resource } from "../../../gen/acms/v1/registry_pb.js";
import type { ResourceScope } from "../../../gen/acms/v1/scope_pb.js";
import type { AcmsClient } from "./acms-client.js";

/** How the `listAll*` helpers page: `pageSize` rows per call (default: the server's, 100; at most 1000). */
export interface ListAllOptions {
  pageSize?: number;
  /** Stops the walk between pages (and aborts the call in flight). */
  signal?: AbortSignal;
}

/** Every row of a paged listing: calls `page` with each `next_page_token` until the server answers an empty one. */
async function* walkPages<T>(page: (pageToken: string) => Promise<{ rows: T[]; next: string }>): AsyncGenerator<T, void, undefined> {
  let token = "";
  do {
    const { rows, next } = await page(token);
    yield* rows;
    token = next;
  } while (token !== "");
}

/**
 * Every project the key may see, by name, across as many ListProjects pages as it takes.
 * @example for await (const p of listAllProjects(acms)) console.log(p.name);
 */
export function listAllProjects(acms: AcmsClient, opts: ListAllOptions = {}): AsyncGenerator<Project, void, undefined> {
  return walkPages(async (pageToken) => {
    const res = await acms.registry.listProjects({ pageSize: opts.pageSize, pageToken }, { signal: opts.signal });
    return { rows: res.projects, next: res.nextPageToken };
  });
}

/**
 * Every resource linked into `project`, by alias there, across as many ListResources pages as it takes.
 * @example for await (const r of listAllResources(acms, "local/api")) console.log(r.alias, r.id);
 */
export function listAllResources(acms: AcmsClient, project: string, opts: ListAllOptions = {}): AsyncGenerator<Resource, void, undefined> {
  return walkPages(async (pageToken) => {
    const res = await acms.registry.listResources({ project, pageSize: opts.pageSize, pageToken }, { signal: opts.signal });
    return { rows: res.resources, next: res.nextPageToken };
  });
}

/**
 * Every scope the key resolved or narrowed, newest first, across as many ListScopes pages as it takes.
 * @example for await (const s of listAllScopes(acms)) console.log(s.scopeId, s.projectNames);
 */
export function listAllScopes(acms: AcmsClient, opts: ListAllOptions = {}): AsyncGenerator<ResourceScope, void, undefined> {
  return walkPages(async (pageToken) => {
    const res = await acms.scope.listScopes({ pageSize: opts.pageSize, pageToken }, { signal: opts.signal });
    return { rows: res.scopes, next: res.nextPageToken };
  });
}
