/** The environment `acmsUrlFromEnv` reads: `process.env` in Node, or any record of the same shape. */
export type AcmsEnv = Readonly<Record<string, string | undefined>>;

/**
 * The server URL a program should call, by the rule the `acms` CLI follows: `ACMS_URL` when it is set,
 * else the address `acms serve` listens on from the same environment, `http://ACMS_HOST:ACMS_PORT`
 * (defaults 127.0.0.1 and 50051). So a shell that exported `ACMS_PORT` for the server reaches it without
 * `ACMS_URL`. A wildcard listen address (0.0.0.0, ::) is dialled on loopback and an IPv6 literal gets its
 * brackets. Throws on a URL that is not http(s) or a port outside 1-65535, rather than dialling a default.
 *
 * @example
 * const acms = createAcmsClient({ baseUrl: acmsUrlFromEnv(), apiKey: process.env.ACMS_API_KEY });
 */
export function acmsUrlFromEnv(env: AcmsEnv = globalThis.process?.env ?? {}): string {
  const url = (env.ACMS_URL ?? "").trim();
  if (url !== "") {
    if (!/^https?:\/\/[^/\s]+/.test(url)) throw new Error(`ACMS_URL must be an http:// or https:// URL, got "${url}"`);
    return url.replace(/\/+$/, "");
  }
  const rawHost = (env.ACMS_HOST ?? "").trim() || "127.0.0.1";
  const host = rawHost === "0.0.0.0" ? "127.0.0.1" : rawHost === "::" || rawHost === "[::]" ? "[::1]" : rawHost;
  const port = (env.ACMS_PORT ?? "").trim() || "50051";
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new Error(`ACMS_PORT must be a port number from 1 to 65535 (dialled when ACMS_URL is unset), got "${port}"`);
  }
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}
