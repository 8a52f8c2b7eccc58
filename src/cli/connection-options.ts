import type { Command } from "commander";
import { createAcmsClient, type AcmsClient } from "../client/create-acms-client.js";
import { CliUsageError, runGuarded } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";

/** The server address used when neither `--url` nor `ACMS_URL` is given. */
export const DEFAULT_URL = "http://127.0.0.1:50051";

/** Where and as whom a command calls, from its flags with the environment as fallback. */
export interface Connection {
  url: string;
  key: string | undefined;
  scope: string | undefined;
  json: boolean;
}

/** Adds `--url`, `--key`, `--scope` (when the command is scoped) and `--json` to a command. */
export function addConnectionOptions(cmd: Command, opts: { scoped: boolean }): Command {
  cmd
    .option("--url <url>", `server URL (env ACMS_URL, default ${DEFAULT_URL})`)
    .option("--key <key>", "API key (env ACMS_API_KEY)");
  if (opts.scoped) cmd.option("--scope <scope-id>", "scope id from `acms scope resolve` (env ACMS_SCOPE)");
  cmd.option("--json", "print JSON instead of text");
  return cmd;
}

/** Reads the connection flags of `cmd` (its own and its parents'), falling back to ACMS_URL, ACMS_API_KEY, ACMS_SCOPE. */
export function connectionOf(cmd: Command, io: CliIo): Connection {
  const o = cmd.optsWithGlobals<{ url?: string; key?: string; scope?: string; json?: boolean }>();
  const url = (o.url ?? io.env.ACMS_URL ?? "").trim() || DEFAULT_URL;
  if (!/^https?:\/\/[^/\s]+/.test(url)) throw new CliUsageError(`--url must be an http:// or https:// URL, got "${url}"`);
  const key = o.key ?? (io.env.ACMS_API_KEY || undefined);
  // Unscoped commands (ingest, scope resolve) never send a scope, whatever ACMS_SCOPE holds.
  const scoped = cmd.options.some((opt) => opt.long === "--scope");
  const scope = scoped ? (o.scope ?? (io.env.ACMS_SCOPE || undefined)) : undefined;
  return { url: url.replace(/\/+$/, ""), key, scope, json: o.json === true };
}

/** Typed clients for `conn`, which must carry an API key; the caller closes them when done. */
export function openClient(conn: Connection): AcmsClient {
  if (!conn.key) throw new CliUsageError("no API key: pass --key or set ACMS_API_KEY (make one with `acms keys create`)");
  return createAcmsClient({ baseUrl: conn.url, apiKey: conn.key, scopeId: conn.scope });
}

/**
 * A commander action that reads the connection, runs `body` with an open client, closes it, and turns any
 * failure into one line on stderr with a non-zero exit status.
 */
export function connectedAction<A extends unknown[]>(
  io: CliIo,
  body: (ctx: { conn: Connection; client: AcmsClient; cmd: Command }, ...args: A) => Promise<void>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    let url: string | undefined;
    await runGuarded(io, () => url, async () => {
      const conn = connectionOf(cmd, io);
      url = conn.url;
      const client = openClient(conn);
      try {
        await body({ conn, client, cmd }, ...(args.slice(0, -2) as A));
      } finally {
        client.close();
      }
    });
  };
}

/** The scope id a scoped command needs, or a usage error saying how to get one. */
export function requireScope(conn: Connection): string {
  if (!conn.scope) {
    throw new CliUsageError("no scope: pass --scope or set ACMS_SCOPE (make one with `acms scope resolve --project <name>`)");
  }
  return conn.scope;
}
