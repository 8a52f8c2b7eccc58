import { createHash, randomBytes } from "node:crypto";

/** A parsed `WWW-Authenticate` challenge (RFC 7616 digest, or basic). */
export interface AuthChallenge {
  scheme: "digest" | "basic";
  params: Record<string, string>;
}

/** Reads the first digest or basic challenge of a `WWW-Authenticate` header; undefined when neither. */
export function parseAuthChallenge(header: string | string[] | undefined): AuthChallenge | undefined {
  const values = Array.isArray(header) ? header : header ? [header] : [];
  for (const value of values) {
    const m = /^\s*(digest|basic)\b(.*)$/is.exec(value);
    if (!m) continue;
    const params: Record<string, string> = {};
    const re = /([a-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi;
    for (let p = re.exec(m[2]); p; p = re.exec(m[2])) params[p[1].toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, "$1") : p[3];
    return { scheme: m[1].toLowerCase() as "digest" | "basic", params };
  }
  return undefined;
}

function hash(algorithm: string, text: string): string {
  return createHash(algorithm).update(text, "utf8").digest("hex");
}

/**
 * Answers challenges with the service's endpoint credentials. Digest (RFC 7616, MD5 or SHA-256, qop
 * "auth") is what Virtuoso's `/sparql-auth` asks for; basic is answered too (over loopback or TLS only,
 * the operator's choice). The nonce is kept and reused with a growing nonce count, so a warm connection
 * pays one round trip per request, not two. The password never leaves this object except hashed (digest)
 * or in the header itself (basic), and never reaches a message or a log.
 */
export class EndpointAuth {
  private challenge?: AuthChallenge;
  private nonceCount = 0;

  constructor(
    private readonly user: string,
    private readonly password: string,
  ) {}

  /** Remembers the challenge of a 401 answer; false when it is neither digest nor basic. */
  accept(header: string | string[] | undefined): boolean {
    const challenge = parseAuthChallenge(header);
    if (!challenge) return false;
    this.challenge = challenge;
    this.nonceCount = 0;
    return true;
  }

  /** The `authorization` header for `method` on `uri` (path and query), or undefined before any challenge. */
  header(method: string, uri: string): string | undefined {
    const c = this.challenge;
    if (!c) return undefined;
    if (c.scheme === "basic") return `Basic ${Buffer.from(`${this.user}:${this.password}`, "utf8").toString("base64")}`;
    const algorithmName = (c.params.algorithm ?? "MD5").toUpperCase();
    const algorithm = algorithmName.startsWith("SHA-256") ? "sha256" : "md5";
    const realm = c.params.realm ?? "";
    const nonce = c.params.nonce ?? "";
    const qop = (c.params.qop ?? "")
      .split(",")
      .map((q) => q.trim())
      .includes("auth")
      ? "auth"
      : undefined;
    const cnonce = randomBytes(8).toString("hex");
    const nc = (++this.nonceCount).toString(16).padStart(8, "0");
    let ha1 = hash(algorithm, `${this.user}:${realm}:${this.password}`);
    if (algorithmName.endsWith("-SESS")) ha1 = hash(algorithm, `${ha1}:${nonce}:${cnonce}`);
    const ha2 = hash(algorithm, `${method}:${uri}`);
    const response = qop ? hash(algorithm, `${ha1}:${nonce}:${nc}:${cnonce}:${qop}:${ha2}`) : hash(algorithm, `${ha1}:${nonce}:${ha2}`);
    const parts = [
      `username="${this.user.replace(/(["\\])/g, "\\$1")}"`,
      `realm="${realm}"`,
      `nonce="${nonce}"`,
      `uri="${uri}"`,
      `algorithm=${algorithmName}`,
      `response="${response}"`,
    ];
    if (c.params.opaque !== undefined) parts.push(`opaque="${c.params.opaque}"`);
    if (qop) parts.push(`qop=${qop}`, `nc=${nc}`, `cnonce="${cnonce}"`);
    return `Digest ${parts.join(", ")}`;
  }
}
