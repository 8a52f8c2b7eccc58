import type { TierFragment } from "../../domain/tier-fragment.js";
import type { LoadedFragment, TierStore } from "../../ports/tier-store.js";

/**
 * A tier store that keeps everything in process memory: for throwaway deployments and for running the
 * tier policy's property tests fast. Passes the same conformance suite as the durable store, except the
 * restart test (nothing survives the process).
 */
export class MemoryTierStore implements TierStore {
  private readonly fragments = new Map<string, TierFragment>();

  async load(): Promise<LoadedFragment[]> {
    return [...this.fragments.values()]
      .sort((a, b) => a.accessSeq - b.accessSeq)
      .map((f) => ({ ...f, metadata: { ...f.metadata }, content: f.tier === "hot" ? f.content : undefined }));
  }

  async readContents(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const id of ids) {
      const f = this.fragments.get(id);
      if (f) out.set(id, f.content);
    }
    return out;
  }

  async save(fragment: TierFragment): Promise<void> {
    this.fragments.set(fragment.id, { ...fragment, metadata: { ...fragment.metadata } });
  }

  async remove(id: string): Promise<void> {
    this.fragments.delete(id);
  }

  recordAccess(id: string, lastAccessedAt: Date, seq: number): void {
    const f = this.fragments.get(id);
    if (f && f.accessSeq < seq) this.fragments.set(id, { ...f, lastAccessedAt, accessSeq: seq });
  }

  /** The tier each stored fragment is in, for tests that check the store against the policy. */
  tiersById(): Map<string, TierFragment["tier"]> {
    return new Map([...this.fragments.values()].map((f) => [f.id, f.tier]));
  }

  async close(): Promise<void> {}
}
