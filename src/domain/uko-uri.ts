import { InvalidArgumentError } from "./errors.js";
import { isUlid } from "./ulid-id.js";
import { validateDocumentPath } from "./document-path.js";

/** A parsed UKO URI: a document (`chunkIndex` undefined) or one of its chunks. */
export interface UkoUri {
  resourceId: string;
  path: string;
  chunkIndex?: number;
}

const PREFIX = "uko://";

/** The URI of a document, or of a chunk when `chunkIndex` is given. */
export function formatUkoUri(resourceId: string, path: string, chunkIndex?: number): string {
  const base = `${PREFIX}${resourceId}/${path}`;
  return chunkIndex === undefined ? base : `${base}#${chunkIndex}`;
}

/** The IRI of a resource's named graph. */
export function graphIri(resourceId: string): string {
  return `${PREFIX}${resourceId}/`;
}

/** The resource id of a named graph IRI, or undefined when the IRI is not one. */
export function resourceIdOfGraphIri(iri: string): string | undefined {
  if (!iri.startsWith(PREFIX) || !iri.endsWith("/")) return undefined;
  const id = iri.slice(PREFIX.length, -1);
  return isUlid(id) ? id : undefined;
}

/**
 * Parses a UKO URI, throwing INVALID_ARGUMENT naming `field` when it is malformed.
 * @example parseUkoUri("uko://01J.../docs/a.md#2", "uko_uris[0]")
 */
export function parseUkoUri(uri: string, field: string): UkoUri {
  const bad = (why: string) => InvalidArgumentError.field(field, `"${uri.slice(0, 120)}" is not a UKO URI: ${why}`);
  if (!uri.startsWith(PREFIX)) throw bad("expected uko://<resource-ulid>/<path>[#<chunk>]");
  const rest = uri.slice(PREFIX.length);
  const slash = rest.indexOf("/");
  if (slash < 0) throw bad("missing path");
  const resourceId = rest.slice(0, slash);
  if (!isUlid(resourceId)) throw bad("the resource id is not a ULID");
  let path = rest.slice(slash + 1);
  let chunkIndex: number | undefined;
  const hash = path.lastIndexOf("#");
  if (hash >= 0) {
    const frag = path.slice(hash + 1);
    if (!/^(0|[1-9][0-9]{0,8})$/.test(frag)) throw bad("the chunk index is not a non-negative integer");
    chunkIndex = Number(frag);
    path = path.slice(0, hash);
  }
  const why = validateDocumentPath(path);
  if (why) throw bad(why);
  return { resourceId, path, chunkIndex };
}
