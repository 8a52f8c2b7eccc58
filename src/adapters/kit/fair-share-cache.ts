/**
 * Entries held per principal within one byte budget shared by all: what one principal holds serves only that
 * principal (one principal's requests never make another's faster, so how long a request takes tells no one
 * what others asked for), and past the budget the principal holding the most gives up one of its entries, again
 * until the holdings fit: a principal asking for much evicts its own entries, never those of one holding less.
 * The keyword posting cache and the chunk row cache hold their entries so.
 * Which entry goes is chosen by second chance (CLOCK), the usual approximation of least recently used: a hit
 * only marks its entry used, and eviction walks the principal's entries from the oldest, moving a used one to
 * the back unmarked and giving up the first unmarked. A search reads a hundred rows or more, each a hit; moving
 * each to the back of its map, as exact LRU order needs, cost more than the rest of the lookup.
 */
export class FairShareCache<K, V> {
  private readonly held = new Map<string, { entries: Map<K, { value: V; bytes: number; used: boolean }>; bytes: number }>();
  private heldBytes = 0;

  /** `maxBytes`: the budget all principals share. */
  constructor(private readonly maxBytes: number) {}

  /** `principal`'s entry `key` (marked used: it gets a second chance at eviction), or undefined. */
  get(principal: string, key: K): V | undefined {
    const e = this.held.get(principal)?.entries.get(key);
    if (e === undefined) return undefined;
    e.used = true;
    return e.value;
  }

  /** Takes `principal`'s entry `key` out (to be set again, changed), or undefined. */
  take(principal: string, key: K): V | undefined {
    const own = this.held.get(principal);
    const e = own?.entries.get(key);
    if (e === undefined) return undefined;
    this.remove(principal, own!, key, e.bytes);
    return e.value;
  }

  /**
   * Holds `value` (`bytes`) as `principal`'s entry `key`, its newest, and brings the holdings within
   * the budget (never evicting this entry: with the budget already taken by it alone, it stays until the next).
   */
  set(principal: string, key: K, value: V, bytes: number): void {
    let own = this.held.get(principal);
    if (own === undefined) this.held.set(principal, (own = { entries: new Map(), bytes: 0 }));
    const old = own.entries.get(key);
    if (old !== undefined) {
      own.entries.delete(key);
      own.bytes -= old.bytes;
      this.heldBytes -= old.bytes;
    }
    own.entries.set(key, { value, bytes, used: false });
    own.bytes += bytes;
    this.heldBytes += bytes;
    this.evict(principal, key);
  }

  /** Drops entry `key` of every principal holding one. */
  deleteEverywhere(key: K): void {
    for (const [principal, own] of this.held) {
      const e = own.entries.get(key);
      if (e !== undefined) this.remove(principal, own, key, e.bytes);
    }
  }

  /** Drops everything held. */
  clear(): void {
    if (this.held.size === 0) return;
    this.held.clear();
    this.heldBytes = 0;
  }

  /** What is held (figures for tests): entries, bytes, and the principals holding some. */
  get holdings(): { entries: number; bytes: number; principals: number } {
    let entries = 0;
    for (const own of this.held.values()) entries += own.entries.size;
    return { entries, bytes: this.heldBytes, principals: this.held.size };
  }

  private remove(principal: string, own: { entries: Map<K, unknown>; bytes: number }, key: K, bytes: number): void {
    own.entries.delete(key);
    own.bytes -= bytes;
    this.heldBytes -= bytes;
    if (own.entries.size === 0) this.held.delete(principal);
  }

  private evict(keepPrincipal: string, keep: K): void {
    while (this.heldBytes > this.maxBytes) {
      let victim: string | undefined;
      let most = -1;
      for (const [principal, own] of this.held) {
        const spare = principal === keepPrincipal && own.entries.size === 1 ? 0 : own.bytes;
        if (spare > most) {
          most = spare;
          victim = principal;
        }
      }
      if (victim === undefined || most <= 0) return;
      const own = this.held.get(victim)!;
      // Second chance: a used entry moves to the back unmarked (a map's iteration reaches entries set during
      // it, so when every entry was used the walk comes round to the first of them, now unmarked).
      for (const [key, e] of own.entries) {
        if (victim === keepPrincipal && key === keep) continue;
        if (e.used) {
          e.used = false;
          own.entries.delete(key);
          own.entries.set(key, e);
          continue;
        }
        this.remove(victim, own, key, e.bytes);
        break;
      }
    }
  }
}
