import type { LinkRecord, ResourceRecord } from "../../ports/registry-store.js";
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
