import type { Command } from "commander";
import type { AcmsClient } from "../client/create-acms-client.js";
import type { CliIo } from "./cli-io.js";
import type { UnaryCaller } from "./unary-caller.js";
import { CliUsageError } from "./cli-usage-error.js";

/** The server address used when none of `--url`, `ACMS_URL`, `ACMS_HOST`, `ACMS_PORT` is given. */
export const DEFAULT_URL = "http://127.0.0.1:50051";

/**
 * The URL of the server `acms serve` starts from the same environment: `ACMS_HOST` (default 127.0.0.1) and
 * `ACMS_PORT` (default 50051), so a shell that set `ACMS_PORT` for the server reaches it without `ACMS_URL`.
 * A wildcard listen address (0.0.0.0, ::) is dialled on loopback; an IPv6 literal gets its brackets.
 */
export function urlFromServeEnv(env: NodeJS.ProcessEnv): string {
  const rawHost = (env.ACMS_HOST ?? "").trim() || "127.0.0.1";
  const host = rawHost === "0.0.0.0" ? "127.0.0.1" : rawHost === "::" || rawHost === "[::]" ? "[::1]" : rawHost;
  const port = (env.ACMS_PORT ?? "").trim() || "50051";
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new CliUsageError(`ACMS_PORT must be a port number from 1 to 65535 (the CLI dials it when ACMS_URL is unset), got "${port}"`);
  }
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

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
    .option("--url <url>", `server URL (env ACMS_URL; else http://ACMS_HOST:ACMS_PORT, default ${DEFAULT_URL})`)
    .option("--key <key>", "API key (env ACMS_API_KEY)");
  if (opts.scoped) cmd.option("--scope <scope-id>", "scope id from `acms scope resolve` (env ACMS_SCOPE)");
  cmd.option("--json", "print JSON instead of text");
  return cmd;
}

/**
 * Reads the connection flags of `cmd` (its own and its parents'), falling back to ACMS_URL (else ACMS_HOST and
 * ACMS_PORT, see `urlFromServeEnv`), ACMS_API_KEY, ACMS_SCOPE.
 */
export function connectionOf(cmd: Command, io: CliIo): Connection {
  const o = cmd.optsWithGlobals<{ url?: string; key?: string; scope?: string; json?: boolean }>();
  const url = (o.url ?? io.env.ACMS_URL ?? "").trim() || urlFromServeEnv(io.env);
  if (!/^https?:\/\/[^/\s]+/.test(url)) throw new CliUsageError(`--url must be an http:// or https:// URL, got "${url}"`);
  const key = o.key ?? (io.env.ACMS_API_KEY || undefined);
  // Unscoped commands (ingest, scope resolve) never send a scope, whatever ACMS_SCOPE holds.
  const scoped = cmd.options.some((opt) => opt.long === "--scope");
  const scope = scoped ? (o.scope ?? (io.env.ACMS_SCOPE || undefined)) : undefined;
  return { url: url.replace(/\/+$/, ""), key, scope, json: o.json === true };
}

/** A command body that runs with an open client: the part of a subcommand that lives in its actions module. */
export type ConnectedBody<A extends unknown[]> = (ctx: { conn: Connection; client: AcmsClient; cmd: Command }, ...args: A) => Promise<void>;

/** A command body that makes its unary calls through the lean client (see `unaryCaller`). */
export type ServiceBody<A extends unknown[]> = (ctx: { conn: Connection; call: UnaryCaller; cmd: Command }, ...args: A) => Promise<void>;

/** The API key of `conn`, or a usage error saying how to get one. */
function requireKey(conn: Connection): string {
  if (!conn.key) throw new CliUsageError("no API key: pass --key or set ACMS_API_KEY (make one with `acms keys create`)");
  return conn.key;
}

/** Typed clients for `conn`, which must carry an API key; the caller closes them when done. */
export async function openClient(conn: Connection): Promise<AcmsClient> {
  const apiKey = requireKey(conn);
  const { createAcmsClient } = await import("../client/create-acms-client.js");
  return createAcmsClient({ baseUrl: conn.url, apiKey, scopeId: conn.scope });
}

/** Runs `run` with the command's connection, turning any failure into one line on stderr (see `runGuarded`). */
function guardedAction(
  io: CliIo,
  run: (conn: Connection, cmd: Command, args: unknown[]) => Promise<void>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    let url: string | undefined;
    const { runGuarded } = await import("./cli-error.js");
    await runGuarded(
      io,
      () => url,
      async () => {
        const conn = connectionOf(cmd, io);
        url = conn.url;
        await run(conn, cmd, args.slice(0, -2));
      },
    );
  };
}

/**
 * A commander action that reads the connection, loads the body from its module (`load`, an `import()`: the
 * client, the generated code and the body load only when this subcommand runs, never for `--help` or another
 * subcommand), runs it with an open client, closes it, and turns any failure into one line on stderr with a
 * non-zero exit status.
 * @example cmd.action(connectedAction(io, async () => (await import("./search-actions.js")).searchText));
 */
export function connectedAction<A extends unknown[]>(
  io: CliIo,
  load: () => Promise<ConnectedBody<A>>,
): (...args: unknown[]) => Promise<void> {
  return guardedAction(io, async (conn, cmd, args) => {
    const [body, client] = await Promise.all([load(), openClient(conn)]);
    try {
      await body({ conn, client, cmd }, ...(args as A));
    } finally {
      client.close();
    }
  });
}

/**
 * As `connectedAction`, for a body that names the services it calls: it gets the lean client
 * (`unaryCaller`: unary calls over node:http, only those methods' code loaded), for commands that make
 * one call and must start fast (`acms search text`).
 */
export function serviceAction<A extends unknown[]>(io: CliIo, load: () => Promise<ServiceBody<A>>): (...args: unknown[]) => Promise<void> {
  return guardedAction(io, async (conn, cmd, args) => {
    const apiKey = requireKey(conn);
    const [body, { unaryCaller }] = await Promise.all([load(), import("./unary-caller.js")]);
    await body({ conn, call: unaryCaller(conn.url, apiKey, conn.scope), cmd }, ...(args as A));
  });
}

/** The scope id a scoped command needs, or a usage error saying how to get one. */
export function requireScope(conn: Connection): string {
  if (!conn.scope) {
    throw new CliUsageError("no scope: pass --scope or set ACMS_SCOPE (make one with `acms scope resolve --project <name>`)");
  }
  return conn.scope;
}
