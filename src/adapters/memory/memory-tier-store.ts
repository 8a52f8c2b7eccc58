import { tierFacts, type TierFragment } from "../../domain/tier-fragment.js";
import type { LoadedFragment, TierStore } from "../../ports/tier-store.js";

/**
 * A tier store that keeps everything in process memory: for throwaway deployments and for running the
 * tier policy's property tests fast. Passes the same conformance suite as the durable store, except the
 * restart test (nothing survives the process). Fragments are kept per owner (owner, then id), the same
 * namespacing the durable store's primary key gives.
 */
export class MemoryTierStore implements TierStore {
  private readonly owners = new Map<string, Map<string, TierFragment>>();

  async load(): Promise<LoadedFragment[]> {
    return [...this.owners.values()]
      .flatMap((byId) => [...byId.values()])
      .sort((a, b) => a.accessSeq - b.accessSeq)
      .map((f) => ({ ...f, metadata: { ...f.metadata }, content: tierFacts(f.tier).inMemory ? f.content : undefined }));
  }

  async readContents(owner: string, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const byId = this.owners.get(owner);
    for (const id of ids) {
      const f = byId?.get(id);
      if (f) out.set(id, f.content);
    }
    return out;
  }

  async save(fragment: TierFragment): Promise<void> {
    let byId = this.owners.get(fragment.owner);
    if (!byId) this.owners.set(fragment.owner, (byId = new Map()));
    byId.set(fragment.id, { ...fragment, metadata: { ...fragment.metadata } });
  }

  async remove(owner: string, id: string): Promise<void> {
    const byId = this.owners.get(owner);
    byId?.delete(id);
    if (byId?.size === 0) this.owners.delete(owner);
  }

  /** Nothing outlives the process: every write is as durable as it will be. */
  sync(): undefined {
    return undefined;
  }

  recordAccess(owner: string, id: string, lastAccessedAt: Date, seq: number): void {
    const byId = this.owners.get(owner);
    const f = byId?.get(id);
    if (byId && f && f.accessSeq < seq) byId.set(id, { ...f, lastAccessedAt, accessSeq: seq });
  }

  /** The tier of each of `owner`'s stored fragments, by id, for tests that check the store against the policy. */
  tiersOf(owner: string): Map<string, TierFragment["tier"]> {
    return new Map([...(this.owners.get(owner)?.values() ?? [])].map((f) => [f.id, f.tier]));
  }

  async close(): Promise<void> {}
}
