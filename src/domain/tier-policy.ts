import { TIER_NAMES, tierBelow, tierFacts, type TierName } from "./tier-fragment.js";

/**
 * The budgets of one deployment, shared by every plan and project; what each counts (tokens or fragments)
 * is the tier's `budget` in TIERS.
 */
export interface TierBudgets {
  maxTokensHot: number;
  maxDecisionsWarm: number;
  maxDecisionsCold: number;
}

/**
 * What the policy knows of a fragment: where it is, what it weighs, and when it was last used. `key` is
 * the fragment's deployment-wide key (fragmentKey(owner, id)): the budgets are shared by every principal,
 * so the policy orders all of them in one LRU per tier, and it never needs to know whose a fragment is.
 */
export interface TierEntry {
  readonly key: string;
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

/**
 * The placement policy of the tiers, with no I/O: which fragment is in which tier, in what order a tier
 * gives its fragments up, and what must move when a tier is over budget. The tier service asks it what
 * to do, persists each step, then records the step here, so a policy can be tested (and property-tested)
 * on its own, and a deployment can inject another one (TierServiceOptions.policy); LruTierPolicy is the
 * default.
 */
export interface TierPolicy {
  readonly budgets: TierBudgets;
  /** A new access number, larger than every one issued or placed before. */
  nextSeq(): number;
  /** The entry of `key`, wherever it is. */
  get(key: string): TierEntry | undefined;
  /** Fragments in `tier`. */
  size(tier: TierName): number;
  /** Tokens held in `tier`. */
  tokens(tier: TierName): number;
  /** The entries of `tier` in the order the policy gives them up (EvictLru takes them from the front). */
  evictionOrder(tier: TierName): IterableIterator<TierEntry>;
  /** Whether a fragment of `tokens` can ever be held by `tier`. */
  fits(tier: TierName, tokens: number): boolean;
  /** Whether `tier` holds more than its budget. */
  over(tier: TierName): boolean;
  /** Puts `key` in `tier`, accessed at `seq`, taking it out of wherever it was. */
  place(key: string, tier: TierName, tokens: number, seq: number): void;
  /** Marks `key` as used at `seq`, keeping its tier. */
  touch(key: string, seq: number): void;
  /** Forgets `key`. */
  remove(key: string): void;
  /** The next step toward every tier within budget, or undefined when all fit. */
  nextOverflowMove(): PlannedMove | undefined;
}

/**
 * The default policy: least recently used first. Each tier's fragments are kept in least-recently-used
 * order, and a tier over budget gives up its least recently used one, one tier down.
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

  /** Fragments in `tier`. */
  size(tier: TierName): number {
    return this.tiers[tier].size;
  }

  /** Tokens held in `tier`. */
  tokens(tier: TierName): number {
    return this.tokenTotals[tier];
  }

  /** The entries of `tier`, least recently used first. */
  evictionOrder(tier: TierName): IterableIterator<TierEntry> {
    return this.tiers[tier].values();
  }

  /** Whether a fragment of `tokens` can ever be held by `tier` (only a token budget can be too small for one). */
  fits(tier: TierName, tokens: number): boolean {
    const facts = tierFacts(tier);
    return facts.budget !== "tokens" || tokens <= this.budgets[facts.budgetKey];
  }

  /** Whether `tier` holds more than its budget (in the unit its budget counts). */
  over(tier: TierName): boolean {
    const facts = tierFacts(tier);
    const used = facts.budget === "tokens" ? this.tokenTotals[tier] : this.tiers[tier].size;
    return used > this.budgets[facts.budgetKey];
  }

  /**
   * Puts `key` in `tier` as its most recently used entry (`seq` must be the largest so far, which
   * nextSeq() guarantees; loading sorts by seq first), taking it out of wherever it was.
   */
  place(key: string, tier: TierName, tokens: number, seq: number): void {
    this.remove(key);
    const entry: TierEntry = { key, tier, tokens, seq };
    this.entries.set(key, entry);
    this.tiers[tier].set(key, entry);
    this.tokenTotals[tier] += tokens;
    if (seq > this.seq) this.seq = seq;
  }

  /** Marks `key` as just used, keeping its tier. */
  touch(key: string, seq: number): void {
    const e = this.entries.get(key);
    if (e) this.place(key, e.tier, e.tokens, seq);
  }

  /** Forgets `key`. */
  remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.tiers[e.tier].delete(key);
    this.tokenTotals[e.tier] -= e.tokens;
  }

  /**
   * The next step toward every tier within budget, or undefined when all fit: the least recently used
   * entry of the topmost over-budget tier goes one tier down; out of the bottom tier it is deleted. Repeating until
   * undefined resolves any cascade (hot overflow can push warm over, which can push cold over).
   */
  nextOverflowMove(): PlannedMove | undefined {
    for (const tier of TIER_NAMES) {
      if (!this.over(tier)) continue;
      const lru = this.evictionOrder(tier).next();
      if (lru.done) continue;
      return { key: lru.value.key, from: tier, to: tierBelow(tier) };
    }
    return undefined;
  }
}
