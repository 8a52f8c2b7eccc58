import * as crypto from "node:crypto";
import { readFileSync } from "node:fs";
import { createPrincipal, type Principal } from "../../domain/principal.js";

/** One entry of the keys file: the key itself is never stored, only its SHA-256. */
export interface KeyEntry {
  name: string;
  key_sha256: string;
  projects: string[];
  write: boolean;
}

/** Node's one-shot digest (Node >= 20.12): a third of createHash's cost, paid on every authenticated call. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: "hex") => string }).hash;

/** The hex SHA-256 of an API key, as the keys file stores it. */
export function hashKey(key: string): string {
  if (oneShotHash) return oneShotHash("sha256", key, "hex");
  return crypto.createHash("sha256").update(key, "utf8").digest("hex");
}

/** A fresh random API key (`acms_` + 43 base64url characters, 256 bits). */
export function generateKey(): string {
  return `acms_${crypto.randomBytes(32).toString("base64url")}`;
}

/**
 * Maps API keys to principals by their hashes, so neither the file nor memory holds a usable key.
 */
export class KeyRing {
  private readonly byHash = new Map<string, Principal>();

  constructor(entries: readonly KeyEntry[]) {
    for (const e of entries) this.byHash.set(e.key_sha256.toLowerCase(), createPrincipal(e.name, e.projects, e.write));
  }

  get size(): number {
    return this.byHash.size;
  }

  /**
   * The principal of `key`, or undefined when the key is unknown. The look-up is by the key's hash,
   * so timing reveals nothing an attacker can steer toward a stored key.
   */
  authenticate(key: string): Principal | undefined {
    return this.byHash.get(hashKey(key));
  }
}

/** Validates parsed keys-file JSON, throwing an Error that names the bad entry. */
export function parseKeyEntries(json: unknown, source: string): KeyEntry[] {
  if (!Array.isArray(json)) throw new Error(`${source}: expected a JSON array of keys`);
  const names = new Set<string>();
  return json.map((raw, i) => {
    const where = `${source}: entry ${i}`;
    if (typeof raw !== "object" || raw === null) throw new Error(`${where} is not an object`);
    const e = raw as Record<string, unknown>;
    if (typeof e.name !== "string" || e.name.length === 0) throw new Error(`${where}: "name" must be a non-empty string`);
    if (names.has(e.name)) throw new Error(`${where}: duplicate name "${e.name}"`);
    names.add(e.name);
    if (typeof e.key_sha256 !== "string" || !/^[0-9a-fA-F]{64}$/.test(e.key_sha256)) {
      throw new Error(`${where}: "key_sha256" must be 64 hex characters (the SHA-256 of the key)`);
    }
    if (!Array.isArray(e.projects) || !e.projects.every((p) => typeof p === "string" && p.length > 0)) {
      throw new Error(`${where}: "projects" must be an array of project globs`);
    }
    if (e.write !== undefined && typeof e.write !== "boolean") throw new Error(`${where}: "write" must be a boolean`);
    return { name: e.name, key_sha256: e.key_sha256, projects: e.projects as string[], write: e.write === true };
  });
}

/**
 * The parsed JSON of a keys file, with errors that name the file; undefined when the file does not exist
 * and `missingOk` (the CLI starts an absent file empty; the server refuses to start without it).
 */
export function readKeysJson(path: string, missingOk = false): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if (missingOk && (err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read keys file ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`keys file ${path} is not valid JSON: ${(err as Error).message}`);
  }
}

/** Reads and validates a keys file. */
export function readKeysFile(path: string): KeyEntry[] {
  return parseKeyEntries(readKeysJson(path), path);
}
