import { IndexService, type DocumentInput, type UpsertDocumentsRequest } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { UpsertDocumentsRequestSchema } from "../../gen/acms/v1/index_pb.js";
import { ensureProject } from "../support/ensure-project.js";
import type { TestServer } from "../support/test-server.js";

/** Creates `project` (if needed) and a resource in it as `principal`, returning the resource id. */
export async function makeResource(t: TestServer, principal: string, project: string, alias: string): Promise<string> {
  await ensureProject(t, principal, project);
  const { resource } = await t.client(RegistryService, principal).registerResource({ project, alias, kind: "repo" });
  return resource!.id;
}

/** A scope id resolved by `principal`. */
export async function makeScope(
  t: TestServer,
  principal: string,
  req: {
    projects: string[];
    includeResources?: string[];
    excludeResources?: string[];
    includePaths?: string[];
    excludePaths?: string[];
    temporalScope?: string;
  },
): Promise<string> {
  const { scope } = await t.client(ScopeService, principal).resolveScope(req);
  return scope!.scopeId;
}

type UpsertInit = MessageInitShape<typeof UpsertDocumentsRequestSchema>;

async function* messages(list: readonly UpsertInit[]): AsyncIterable<UpsertInit> {
  for (const m of list) yield m;
}

/** Streams the messages to UpsertDocuments as `principal`. */
export function upsert(t: TestServer, principal: string, list: readonly UpsertInit[]) {
  return t.client(IndexService, principal).upsertDocuments(messages(list));
}

/** A document init. */
export function doc(
  path: string,
  content: string,
  extra: Partial<Pick<DocumentInput, "metadata">> & { chunks?: Array<{ text: string; embedding?: number[] }> } = {},
) {
  return { path, content, metadata: extra.metadata ?? {}, chunks: extra.chunks ?? [] };
}

export type { UpsertDocumentsRequest };
