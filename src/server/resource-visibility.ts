import type { RegistryStore } from "../ports/registry-store.js";
import type { Principal } from "./principal.js";

/**
 * Whether `principal` may see a resource: it is linked into a project the key allows (a resource that does
 * not exist is invisible the same way). Memoised for the one call it is made for, because listings and
 * descendant expansion ask about the same ids many times.
 */
export function resourceVisibility(registry: RegistryStore, principal: Principal): (id: string) => boolean {
  const memo = new Map<string, boolean>();
  return (id) => {
    let v = memo.get(id);
    if (v === undefined) {
      v = registry.getResource(id)?.links.some((l) => principal.allowsProject(l.project)) ?? false;
      memo.set(id, v);
    }
    return v;
  };
}
