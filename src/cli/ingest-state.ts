import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/**
 * What a previous `acms ingest` of one resource on one server finished: each document path with the
 * SHA-256 of the content the server confirmed. A re-run skips files whose hash is unchanged, so an
 * interrupted run resumes where it stopped, and `--prune` knows which documents this folder put there.
 */
export interface IngestState {
  version: 1;
  url: string;
  resourceId: string;
  files: Record<string, string>;
}

/** The state file of a (server, resource) pair, under the user's cache directory (XDG_CACHE_HOME or ~/.cache). */
export function defaultStatePath(env: NodeJS.ProcessEnv, url: string, resourceId: string): string {
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  const key = createHash("sha256").update(`${url}\n${resourceId}`).digest("hex").slice(0, 32);
  return join(cache, "acms", "ingest", `${key}.json`);
}

/** Loads the state, or an empty one when there is none or it belongs to another server or resource. */
export function loadIngestState(path: string, url: string, resourceId: string): IngestState {
  const empty: IngestState = { version: 1, url, resourceId, files: {} };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return empty;
  }
  const s = json as Partial<IngestState>;
  if (s.version !== 1 || s.url !== url || s.resourceId !== resourceId || typeof s.files !== "object" || s.files === null) return empty;
  return { version: 1, url, resourceId, files: { ...s.files } };
}

/** Saves the state atomically (a temporary file renamed over it), so a kill at any moment leaves a valid file. */
export function saveIngestState(path: string, state: IngestState): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(tmp, JSON.stringify(state));
  renameSync(tmp, path);
}

/** The hex SHA-256 of file content. */
export function contentHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
