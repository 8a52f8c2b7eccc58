import { AlreadyExistsError } from "../../domain/errors.js";
import { assertResourceRequest } from "../../domain/new-resource-check.js";
import { newUlid } from "../../domain/ulid-id.js";
import type { LinkRecord, NewResource, ResourceRecord } from "../../ports/registry-store.js";
import { groupBy } from "./group-by.js";

/** A row of `registry_resources`, as every registry engine stores it. */
export interface ResourceRow {
  id: string;
  owner_project: string;
  kind: string;
  /** `encodeMetadata`'s JSON. */
  metadata: string;
  /** Milliseconds since the epoch. */
  created_at: number;
}

/** A row of `registry_links`. */
export interface LinkRow {
  project: string;
  resource_id: string;
  alias: string;
}

export function toLink(r: LinkRow): LinkRecord {
  return { project: r.project, resourceId: r.resource_id, alias: r.alias };
}

/** Metadata is stored as an array of pairs, so no key (not even `__proto__`) is special on the way back. */
export function encodeMetadata(metadata: Record<string, string>): string {
  return JSON.stringify(Object.entries(metadata));
}

/** The record `encodeMetadata` stored, every key an own enumerable property. */
export function decodeMetadata(json: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of JSON.parse(json) as Array<[string, string]>) {
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A stored resource with its parents (in registration order) and links. */
export function toResourceRecord(row: ResourceRow, parentIds: string[], links: LinkRecord[]): ResourceRecord {
  return {
    id: row.id,
    ownerProject: row.owner_project,
    kind: row.kind,
    parentIds,
    metadata: decodeMetadata(row.metadata),
    createdAt: new Date(row.created_at),
    links,
  };
}

/**
 * ValidateAliases' messages for the links of one project (ordered by alias): aliases that differ only in
 * case, and an alias that spells the id of another resource linked into the project.
 */
export function aliasCollisions(project: string, links: readonly LinkRow[]): string[] {
  const messages: string[] = [];
  for (const group of groupBy(links, (l) => l.alias.toLowerCase()).values()) {
    if (group.length < 2) continue;
    const names = group.map((l) => `"${l.alias}" (${l.resource_id})`).join(", ");
    messages.push(`aliases ${names} in ${project} differ only in case`);
  }
  const ids = new Set(links.map((l) => l.resource_id));
  for (const l of links) {
    const asId = l.alias.toUpperCase();
    if (asId !== l.resource_id && ids.has(asId)) {
      messages.push(`alias "${l.alias}" of ${l.resource_id} in ${project} equals the id of another resource linked into it`);
    }
  }
  return messages;
}

/** What a RegisterResource writes, checked: its id (a new ULID when none is asked for), parents once each, time, metadata. */
export interface ResourceToWrite {
  id: string;
  parentIds: string[];
  createdAt: number;
  /** `encodeMetadata`'s JSON. */
  metadata: string;
}

/** Checks a registration's shape (INVALID_ARGUMENT) and settles what every engine writes for it. */
export function resourceToWrite(input: NewResource): ResourceToWrite {
  assertResourceRequest(input);
  return {
    id: input.id.length > 0 ? input.id : newUlid(),
    parentIds: [...new Set(input.parentIds)],
    createdAt: Date.now(),
    metadata: encodeMetadata(input.metadata),
  };
}

/** The record of a registration just written: its owner project's link is its only one. */
export function registeredResource(input: NewResource, w: ResourceToWrite): ResourceRecord {
  return {
    id: w.id,
    ownerProject: input.project,
    kind: input.kind,
    parentIds: w.parentIds,
    metadata: decodeMetadata(w.metadata),
    createdAt: new Date(w.createdAt),
    links: [{ project: input.project, resourceId: w.id, alias: input.alias }],
  };
}

/** The registry's refusals, worded alike on every engine (each engine detects them its own way). */
export const registryErrors = {
  projectExists: (name: string) => new AlreadyExistsError(`project ${name} already exists`),
  resourceExists: (id: string) => new AlreadyExistsError(`resource ${id} already exists`),
  aliasTaken: (alias: string, project: string) => new AlreadyExistsError(`alias "${alias}" is already taken in ${project}`),
  /** A registration that lost a race for its id or alias (the constraint, not the check, refused it). */
  registrationTaken: (id: string, alias: string, project: string) =>
    new AlreadyExistsError(`resource ${id} or alias "${alias}" in ${project} already exists`),
  alreadyLinked: (resourceId: string, project: string) =>
    new AlreadyExistsError(`resource ${resourceId} is already linked into ${project}`),
  /** A link that lost a race for its resource or alias. */
  linkTaken: (link: LinkRecord) =>
    new AlreadyExistsError(`resource ${link.resourceId} or alias "${link.alias}" already in ${link.project}`),
};
