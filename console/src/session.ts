import { createAcmsWebClient, type AcmsClient } from "@acms/client/web";

/**
 * The operator's key and the tab's scopes live in sessionStorage only: gone when the tab closes, never in
 * a URL (the router uses the hash for page names only), never logged.
 */
const KEY = "acms.console.key";
const SCOPE = "acms.console.scope";
const MADE = "acms.console.scopes";

/** A scope this tab resolved, remembered so the scope page can list it (no RPC lists a key's scopes). */
export interface MadeScope {
  scopeId: string;
  projects: string[];
  resourceCount: number;
  summary: string;
}

export function getKey(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function setKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

/** Forgets the key and everything made with it. */
export function signOut(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(SCOPE);
  sessionStorage.removeItem(MADE);
}

/** The scope the search and tier pages call with. */
export function getScopeId(): string | undefined {
  return sessionStorage.getItem(SCOPE) ?? undefined;
}

/** Event fired on `window` when the scope in use changes, so the header can show it. */
export const SCOPE_CHANGED = "acms-scope-changed";

export function setScopeId(scopeId: string): void {
  sessionStorage.setItem(SCOPE, scopeId);
  window.dispatchEvent(new Event(SCOPE_CHANGED));
}

export function madeScopes(): MadeScope[] {
  try {
    const raw = JSON.parse(sessionStorage.getItem(MADE) ?? "[]") as unknown;
    return Array.isArray(raw) ? (raw as MadeScope[]) : [];
  } catch {
    return [];
  }
}

/** Remembers a scope, newest first, keeping the latest 50. */
export function rememberScope(scope: MadeScope): void {
  const rest = madeScopes().filter((s) => s.scopeId !== scope.scopeId);
  sessionStorage.setItem(MADE, JSON.stringify([scope, ...rest].slice(0, 50)));
}

/** Clients of every service on this origin with the tab's key, scoped to `scopeId` when given. */
export function client(scopeId?: string): AcmsClient {
  const base = createAcmsWebClient({ baseUrl: window.location.origin, apiKey: getKey(), defaultTimeoutMs: 30_000 });
  return scopeId === undefined ? base : base.withScope(scopeId);
}
