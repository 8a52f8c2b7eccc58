import { NotFoundError } from "../../domain/errors.js";
import type { RegistryStore } from "../../ports/registry-store.js";

/**
 * Whether a write may name resource `resourceId` now: it exists and is not being erased. A resource being
 * erased is gone for every write but its erasure's own (uploads, PutTriples, StoreFragment).
 */
export async function isWritableResource(registry: Pick<RegistryStore, "resourceState">, resourceId: string): Promise<boolean> {
  const state = await registry.resourceState(resourceId);
  return state !== undefined && !state.erasing;
}

/** What a write naming a resource that is gone or being erased gets: NOT_FOUND, as for one that never was. */
export function resourceNotFound(resourceId: string): NotFoundError {
  return new NotFoundError(`resource ${resourceId} not found`);
}
