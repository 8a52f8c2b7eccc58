import type { RegistryStore } from "../ports/registry-store.js";
import type { ScopeStore } from "../ports/scope-store.js";

/**
 * The adapters one server runs on, picked by the composition root. Tests swap any member for another
 * implementation of the same port.
 */
export interface Backends {
  registry: RegistryStore;
  scopes: ScopeStore;
  /** Releases every adapter (flushes and closes databases). */
  close(): Promise<void>;
}
