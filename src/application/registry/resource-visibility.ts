import type { RegistryStore } from "../../ports/registry-store.js";
import { mayRead, type Principal } from "../../domain/principal.js";

/** Whether a resource is visible to one principal, answered from the registry and memoised. */
export interface ResourceVisibility {
  (id: string): Promise<boolean>;
  /** The ids of `ids` that are visible, in order (looked up concurrently). */
  filter(ids: readonly string[]): Promise<string[]>;
}

/**
 * Whether `principal` may see a resource: it is linked into a project the key allows (a resource that does
 * not exist is invisible the same way). Memoised for the one call it is made for, because listings and
 * descendant expansion ask about the same ids many times.
 */
export function resourceVisibility(registry: RegistryStore, principal: Principal): ResourceVisibility {
  const memo = new Map<string, Promise<boolean>>();
  const visible = (id: string): Promise<boolean> => {
    let v = memo.get(id);
    if (v === undefined) {
      v = registry.getResource(id).then((r) => mayRead(principal, r));
      memo.set(id, v);
    }
    return v;
  };
  return Object.assign(visible, {
    async filter(ids: readonly string[]): Promise<string[]> {
      const flags = await Promise.all(ids.map(visible));
      return ids.filter((_, i) => flags[i]);
    },
  });
}
