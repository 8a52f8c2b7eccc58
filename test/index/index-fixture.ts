import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { IndexService, type DocumentInput, type UpsertDocumentsRequest } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { UpsertDocumentsRequestSchema } from "../../gen/acms/v1/index_pb.js";
import type { TestServer } from "../support/test-server.js";

/** The error of a call that must fail. */
export async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

/** Asserts the code (and that no stack trace reaches the wire). */
export async function expectCode(p: Promise<unknown>, code: Code): Promise<ConnectError> {
  const err = await failure(p);
  expect(Code[err.code]).toBe(Code[code]);
  expect(err.rawMessage).not.toMatch(/\n\s+at /);
  return err;
}

/** The BadRequest field names of an INVALID_ARGUMENT failure. */
export async function badFields(p: Promise<unknown>): Promise<string[]> {
  const err = await expectCode(p, Code.InvalidArgument);
  const [detail] = err.findDetails(BadRequestSchema);
  expect(detail).toBeDefined();
  return detail.fieldViolations.map((v) => v.field);
}

/** Creates `project` (if needed) and a resource in it as `principal`, returning the resource id. */
export async function makeResource(t: TestServer, principal: string, project: string, alias: string): Promise<string> {
  const reg = t.client(RegistryService, principal);
  try {
    await reg.createProject({ name: project });
  } catch (err) {
    if (ConnectError.from(err).code !== Code.AlreadyExists) throw err;
  }
  const { resource } = await reg.registerResource({ project, alias, kind: "repo" });
  return resource!.id;
}

/** A scope id resolved by `principal`. */
export async function makeScope(
  t: TestServer,
  principal: string,
  req: { projects: string[]; includeResources?: string[]; excludeResources?: string[]; includePaths?: string[]; excludePaths?: string[]; temporalScope?: string },
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
export function doc(path: string, content: string, extra: Partial<Pick<DocumentInput, "metadata">> & { chunks?: Array<{ text: string; embedding?: number[] }> } = {}) {
  return { path, content, metadata: extra.metadata ?? {}, chunks: extra.chunks ?? [] };
}

export type { UpsertDocumentsRequest };
