import { TIER_NAMES, tierBelow, tierFacts, type TierName } from "./tier-fragment.js";

/**
 * The budgets of each pool (one principal's fragments of one project); what each counts (tokens or
 * fragments) is the tier's `budget` in TIERS. Per pool, so one tenant's or project's fragments never
 * displace, demote or evict another's.
 */
export interface TierBudgets {
  maxTokensHot: number;
  maxDecisionsWarm: number;
  maxDecisionsCold: number;
}

/**
 * What the policy knows of a fragment: where it is, what it weighs, and when it was last used. `key` is
 * the fragment's deployment-wide key (fragmentKey(owner, id)); `pool` names the budget it counts against
 * (the service uses one per principal and project), and the policy never needs to know more of whose it is.
 */
export interface TierEntry {
  readonly key: string;
  readonly pool: string;
  readonly tier: TierName;
  readonly tokens: number;
  /** Access order: larger is more recent. */
  readonly seq: number;
}

/** One step that brings the tiers back within budget: down one tier, or out of cold (`to` undefined). */
export interface PlannedMove {
  key: string;
  from: TierName;
  /** The tier below, or undefined when the fragment is deleted (cold overflow). */
  to: TierName | undefined;
}

/** One budget's tiers: LRU maps and token totals. */
interface Pool {
  readonly tiers: Record<TierName, Map<string, TierEntry>>;
  readonly tokenTotals: Record<TierName, number>;
}

/**
 * The placement policy of the tiers, with no I/O: which fragment is in which tier and budget pool, in what
 * order a tier gives its fragments up, and what must move when a tier of a pool is over its budget. The tier
 * service asks it what to do, persists each step, then records the step here, so a policy can be tested (and
 * property-tested) on its own, and a deployment can inject another one (TierServiceOptions.policy);
 * LruTierPolicy is the default. `pool` names the budget an entry counts against ("" when not given).
 */
export interface TierPolicy {
  readonly budgets: TierBudgets;
  /** A new access number, larger than every one issued or placed before. */
  nextSeq(): number;
  /** The entry of `key`, wherever it is. */
  get(key: string): TierEntry | undefined;
  /** Fragments in `tier`, over every pool. */
  size(tier: TierName): number;
  /** Tokens held in `tier`, over every pool. */
  tokens(tier: TierName): number;
  /** Fragments in `tier` of `pool`. */
  poolSize(pool: string, tier: TierName): number;
  /** Tokens held in `tier` of `pool`. */
  poolTokens(pool: string, tier: TierName): number;
  /**
   * The entries of `tier` (of `pool` only, when given) in the order the policy gives them up: EvictLru
   * takes them from the front, and so does overflow within the pool that overflowed.
   */
  evictionOrder(tier: TierName, pool?: string): IterableIterator<TierEntry>;
  /** Whether a fragment of `tokens` can ever be held by `tier`. */
  fits(tier: TierName, tokens: number): boolean;
  /** Whether `tier` of `pool` holds more than its budget. */
  over(tier: TierName, pool?: string): boolean;
  /** Puts `key` in `tier`, accessed at `seq`, counted against `pool`, taking it out of wherever it was. */
  place(key: string, tier: TierName, tokens: number, seq: number, pool?: string): void;
  /** Marks `key` as used at `seq`, keeping its tier and pool. */
  touch(key: string, seq: number): void;
  /** Forgets `key`. */
  remove(key: string): void;
  /** The next step toward every pool's tiers within budget, or undefined when all fit; a step never leaves its pool. */
  nextOverflowMove(): PlannedMove | undefined;
}

/**
 * The default policy: least recently used first. Each tier's fragments are kept in least-recently-used
 * order, over every pool and per pool, and a pool's tier over budget gives up its least recently used one,
 * one tier down in the same pool.
 *
 * Each tier is a Map kept in ascending access order (a Map iterates in insertion order, and every access
 * re-inserts at the end), so the least recently used entry is always the first: O(1) to find and to move.
 * @example
 * const p = new LruTierPolicy({ maxTokensHot: 100, maxDecisionsWarm: 2, maxDecisionsCold: 2 });
 * p.place("a", "hot", 80, p.nextSeq()); p.place("b", "hot", 40, p.nextSeq());
 * p.nextOverflowMove(); // { key: "a", from: "hot", to: "warm" }
 */
export class LruTierPolicy implements TierPolicy {
  private readonly tiers: Record<TierName, Map<string, TierEntry>> = { hot: new Map(), warm: new Map(), cold: new Map() };
  private readonly entries = new Map<string, TierEntry>();
  private readonly tokenTotals: Record<TierName, number> = { hot: 0, warm: 0, cold: 0 };
  private readonly pools = new Map<string, Pool>();
  /** Pools changed since they were last found within budget: the only ones nextOverflowMove() looks at. */
  private readonly dirty = new Set<string>();
  private seq = 0;

  constructor(readonly budgets: TierBudgets) {}

  /** A new access number, larger than every one issued or placed before. */
  nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }

  /** The entry of `key`, wherever it is. */
  get(key: string): TierEntry | undefined {
    return this.entries.get(key);
  }

  /** Fragments in `tier`, over every pool. */
  size(tier: TierName): number {
    return this.tiers[tier].size;
  }

  /** Tokens held in `tier`, over every pool. */
  tokens(tier: TierName): number {
    return this.tokenTotals[tier];
  }

  /** Fragments in `tier` of `pool`. */
  poolSize(pool: string, tier: TierName): number {
    return this.pools.get(pool)?.tiers[tier].size ?? 0;
  }

  /** Tokens held in `tier` of `pool`. */
  poolTokens(pool: string, tier: TierName): number {
    return this.pools.get(pool)?.tokenTotals[tier] ?? 0;
  }

  /** The entries of `tier` (over every pool, or of `pool` only), least recently used first. */
  evictionOrder(tier: TierName, pool?: string): IterableIterator<TierEntry> {
    if (pool === undefined) return this.tiers[tier].values();
    return (this.pools.get(pool)?.tiers[tier] ?? new Map<string, TierEntry>()).values();
  }

  /** Whether a fragment of `tokens` can ever be held by `tier` (only a token budget can be too small for one). */
  fits(tier: TierName, tokens: number): boolean {
    const facts = tierFacts(tier);
    return facts.budget !== "tokens" || tokens <= this.budgets[facts.budgetKey];
  }

  /** Whether `tier` of `pool` holds more than its budget (in the unit its budget counts). */
  over(tier: TierName, pool = ""): boolean {
    const p = this.pools.get(pool);
    if (!p) return false;
    const facts = tierFacts(tier);
    const used = facts.budget === "tokens" ? p.tokenTotals[tier] : p.tiers[tier].size;
    return used > this.budgets[facts.budgetKey];
  }

  /**
   * Puts `key` in `tier` as its most recently used entry (`seq` must be the largest so far, which
   * nextSeq() guarantees; loading sorts by seq first), counted against `pool`'s budget, taking it out of
   * wherever it was.
   */
  place(key: string, tier: TierName, tokens: number, seq: number, pool = ""): void {
    this.remove(key);
    const entry: TierEntry = { key, pool, tier, tokens, seq };
    this.entries.set(key, entry);
    this.tiers[tier].set(key, entry);
    this.tokenTotals[tier] += tokens;
    let p = this.pools.get(pool);
    if (!p) {
      p = { tiers: { hot: new Map(), warm: new Map(), cold: new Map() }, tokenTotals: { hot: 0, warm: 0, cold: 0 } };
      this.pools.set(pool, p);
    }
    p.tiers[tier].set(key, entry);
    p.tokenTotals[tier] += tokens;
    this.dirty.add(pool);
    if (seq > this.seq) this.seq = seq;
  }

  /**
   * Marks `key` as just used, keeping its tier and pool: it moves to the end of its tier's maps, and no
   * budget changes (a read is the hottest path of the tiers: no pool is dropped, made again or rechecked).
   */
  touch(key: string, seq: number): void {
    const e = this.entries.get(key);
    if (!e) return;
    const entry: TierEntry = { key, pool: e.pool, tier: e.tier, tokens: e.tokens, seq };
    this.entries.set(key, entry);
    const tier = this.tiers[e.tier];
    tier.delete(key);
    tier.set(key, entry);
    const inPool = this.pools.get(e.pool)!.tiers[e.tier];
    inPool.delete(key);
    inPool.set(key, entry);
    if (seq > this.seq) this.seq = seq;
  }

  /** Forgets `key`. */
  remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.tiers[e.tier].delete(key);
    this.tokenTotals[e.tier] -= e.tokens;
    const p = this.pools.get(e.pool)!;
    p.tiers[e.tier].delete(key);
    p.tokenTotals[e.tier] -= e.tokens;
    if (p.tiers.hot.size + p.tiers.warm.size + p.tiers.cold.size === 0) {
      this.pools.delete(e.pool);
      this.dirty.delete(e.pool);
    }
  }

  /**
   * The next step toward every pool's tiers within budget, or undefined when all fit: the first entry in
   * eviction order of a pool's topmost over-budget tier goes one tier down in the same pool; out of the bottom
   * tier it is deleted. Repeating until undefined resolves any cascade (hot overflow can push warm over, which
   * can push cold over), and a move never touches another pool. Only pools changed since they last fit are
   * looked at.
   */
  nextOverflowMove(): PlannedMove | undefined {
    for (const pool of this.dirty) {
      for (const tier of TIER_NAMES) {
        if (!this.over(tier, pool)) continue;
        // The pool check keeps a move in its pool even under an override that orders the whole tier.
        for (const e of this.evictionOrder(tier, pool)) {
          if (e.pool === pool) return { key: e.key, from: tier, to: tierBelow(tier) };
        }
      }
      this.dirty.delete(pool);
    }
    return undefined;
  }
}
