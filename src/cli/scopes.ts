import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { addConnectionOptions, connectedAction } from "./connection-options.js";

const actions = () => import("./scopes-actions.js");

/**
 * `acms scopes list`: the scopes the key resolved or narrowed, newest first (every page). The body is in
 * `scopes-actions.ts`, loaded only when it runs.
 */
export function scopesCommand(io: CliIo): Command {
  const scopes = new Command("scopes").description("list the scopes the key resolved or narrowed");
  addConnectionOptions(scopes.command("list").description("the key's stored scopes, newest first"), { scoped: false }).action(
    connectedAction(io, async () => (await actions()).listScopes(io)),
  );
  return scopes;
}
