import type { TierName } from "../../src/domain/tier-fragment.js";
import type { TierBudgets } from "../../src/domain/tier-policy.js";

/** Who may see a model fragment within its principal: a view is the set of owners (project, resource) it allows. */
export type Owner = "a" | "b" | "a+r";

/** The principal a call runs as: fragment ids are namespaced per principal, and views never cross principals. */
export type Principal = "p" | "q";

/** An operation of a random sequence, run as `principal`. */
export type TierOp =
  | { kind: "store"; principal: Principal; id: string; tokens: number; tier: TierName | undefined; owner: Owner; narrow: boolean }
  | { kind: "get" | "promote" | "demote"; principal: Principal; id: string; narrow: boolean }
  | { kind: "evict"; principal: Principal; tier: TierName; count: number; narrow: boolean };

/** What the model expects an operation to end in. */
export type Outcome = "ok" | "not_found" | "failed_precondition" | "invalid_argument" | "already_exists" | "scope_violation";

interface Item {
  principal: Principal;
  id: string;
  tokens: number;
  owner: Owner;
}

const BELOW: Record<TierName, TierName | undefined> = { hot: "warm", warm: "cold", cold: undefined };
const ABOVE: Record<TierName, TierName | undefined> = { hot: undefined, warm: "hot", cold: "warm" };

/** The full view sees every owner; the narrow one only fragments of project a with no resource. */
export function visibleTo(owner: Owner, narrow: boolean): boolean {
  return !narrow || owner === "a";
}

/** The project an owner's fragments belong to: the budget pool, with the principal. */
function projectOf(owner: Owner): "a" | "b" {
  return owner === "b" ? "b" : "a";
}

/** The counter bucket of `principal`'s lookups through the full or narrow view that found nothing. */
function missBucket(principal: Principal, narrow: boolean): string {
  return `${principal}/@${narrow ? "narrow" : "full"}`;
}

/** The budget pool (and counter bucket) of an item: its principal and project. */
function poolOf(item: Item): string {
  return `${item.principal}/${projectOf(item.owner)}`;
}

type Counters = {
  hotHits: number;
  hotMisses: number;
  warmHits: number;
  warmMisses: number;
  coldHits: number;
  misses: number;
  promotions: number;
  demotions: number;
  evictions: number;
};

const zero = (): Counters => ({
  hotHits: 0,
  hotMisses: 0,
  warmHits: 0,
  warmMisses: 0,
  coldHits: 0,
  misses: 0,
  promotions: 0,
  demotions: 0,
  evictions: 0,
});

/** Whether a call as `principal` through a full or narrow view sees `item`: its own principal's, and allowed by the view. */
function sees(principal: Principal, narrow: boolean, item: Item): boolean {
  return item.principal === principal && visibleTo(item.owner, narrow);
}

/**
 * An independent reference of the tier semantics, written as plainly as possible (arrays in LRU order,
 * linear scans), that the property tests run side by side with the real service. A fragment is
 * (principal, id); the budgets apply per pool (one principal's fragments of one project), so an overflow
 * only ever moves fragments of the pool that overflowed, and the counters are kept per pool (lookups that
 * found nothing per principal), summed over what a view covers.
 */
export class TierModel {
  readonly tiers: Record<TierName, Item[]> = { hot: [], warm: [], cold: [] };
  /** Counters by pool ("p/a"), and by principal alone ("p/") for lookups that found nothing visible. */
  private readonly counterBuckets = new Map<string, Counters>();

  constructor(readonly budgets: TierBudgets) {}

  apply(op: TierOp): Outcome {
    switch (op.kind) {
      case "store": {
        const tier = op.tier ?? "hot";
        if (!visibleTo(op.owner, op.narrow)) return "scope_violation";
        if (tier === "hot" && op.tokens > this.budgets.maxTokensHot) return "invalid_argument";
        const found = this.find(op.principal, op.id);
        if (found && !sees(op.principal, op.narrow, found.item)) return "already_exists";
        this.take(op.principal, op.id);
        this.tiers[tier].push({ principal: op.principal, id: op.id, tokens: op.tokens, owner: op.owner });
        this.rebalance();
        return "ok";
      }
      case "get": {
        const found = this.find(op.principal, op.id);
        if (!found || !sees(op.principal, op.narrow, found.item)) {
          // A miss has no project: it counts under the view (scope) it was asked through.
          const c = this.bucket(missBucket(op.principal, op.narrow));
          c.hotMisses++;
          c.warmMisses++;
          c.misses++;
          return "not_found";
        }
        const c = this.bucket(poolOf(found.item));
        if (found.tier === "hot") c.hotHits++;
        else if (found.tier === "warm") {
          c.hotMisses++;
          c.warmHits++;
        } else {
          c.hotMisses++;
          c.warmMisses++;
          c.coldHits++;
        }
        this.take(op.principal, op.id);
        this.tiers[found.tier].push(found.item);
        return "ok";
      }
      case "promote":
      case "demote": {
        const found = this.find(op.principal, op.id);
        if (!found || !sees(op.principal, op.narrow, found.item)) return "not_found";
        const to = op.kind === "promote" ? ABOVE[found.tier] : BELOW[found.tier];
        if (!to) return "failed_precondition";
        if (to === "hot" && found.item.tokens > this.budgets.maxTokensHot) return "failed_precondition";
        this.take(op.principal, op.id);
        this.tiers[to].push(found.item);
        if (op.kind === "promote") this.bucket(poolOf(found.item)).promotions++;
        else this.bucket(poolOf(found.item)).demotions++;
        this.rebalance();
        return "ok";
      }
      case "evict": {
        const victims = this.tiers[op.tier].filter((i) => sees(op.principal, op.narrow, i)).slice(0, op.count);
        for (const v of victims) {
          this.take(v.principal, v.id);
          const to = BELOW[op.tier];
          if (to) {
            this.tiers[to].push(v);
            this.bucket(poolOf(v)).demotions++;
          } else this.bucket(poolOf(v)).evictions++;
        }
        // The pools the victims came from overflow in the order the victims moved, and settle in that order
        // (the service's policy rebalances pools in the order a change first touched them).
        this.rebalance(victims.map(poolOf));
        return "ok";
      }
    }
  }

  /** The ids of `principal`'s fragments in `tier`, least recently used first. */
  ids(tier: TierName, principal: Principal): string[] {
    return this.tiers[tier].filter((i) => i.principal === principal).map((i) => i.id);
  }

  /**
   * The counters the full or narrow view of `principal` reports: its lookups through that view that found
   * nothing, plus its pools of the view's projects (a and b, or a).
   */
  counters(principal: Principal, narrow: boolean): Counters {
    const sum = zero();
    const projects = narrow ? ["a"] : ["a", "b"];
    for (const key of [missBucket(principal, narrow), ...projects.map((p) => `${principal}/${p}`)]) {
      const c = this.counterBuckets.get(key);
      if (c) for (const k of Object.keys(sum) as (keyof Counters)[]) sum[k] += c[k];
    }
    return sum;
  }

  /** Fragments of every principal in `tier`. */
  size(tier: TierName): number {
    return this.tiers[tier].length;
  }

  private find(principal: Principal, id: string): { tier: TierName; item: Item } | undefined {
    for (const tier of ["hot", "warm", "cold"] as const) {
      const item = this.tiers[tier].find((i) => i.principal === principal && i.id === id);
      if (item) return { tier, item };
    }
    return undefined;
  }

  private take(principal: Principal, id: string): void {
    for (const tier of ["hot", "warm", "cold"] as const) {
      this.tiers[tier] = this.tiers[tier].filter((i) => !(i.principal === principal && i.id === id));
    }
  }

  private bucket(key: string): Counters {
    let c = this.counterBuckets.get(key);
    if (!c) {
      c = zero();
      this.counterBuckets.set(key, c);
    }
    return c;
  }

  private over(tier: TierName, pool: string): boolean {
    const items = this.tiers[tier].filter((i) => poolOf(i) === pool);
    if (tier === "hot") return items.reduce((s, i) => s + i.tokens, 0) > this.budgets.maxTokensHot;
    return items.length > (tier === "warm" ? this.budgets.maxDecisionsWarm : this.budgets.maxDecisionsCold);
  }

  /** Brings every pool within budget, each on its own: the LRU item of the pool's topmost over-budget tier moves down. */
  /** Moves overflow down until every pool fits; `first`: the pools to settle first, in order (then the rest). */
  private rebalance(first: readonly string[] = []): void {
    for (const pool of new Set([...first, "p/a", "p/b", "q/a", "q/b"])) {
      for (;;) {
        const tier = (["hot", "warm", "cold"] as const).find((t) => this.over(t, pool));
        if (!tier) break;
        const at = this.tiers[tier].findIndex((i) => poolOf(i) === pool);
        const [lru] = this.tiers[tier].splice(at, 1);
        const to = BELOW[tier];
        if (to) {
          this.tiers[to].push(lru);
          this.bucket(pool).demotions++;
        } else this.bucket(pool).evictions++;
      }
    }
  }

  /** Fragments of `principal`'s `project` in `tier`. */
  poolSize(tier: TierName, principal: Principal, project: "a" | "b"): number {
    return this.tiers[tier].filter((i) => poolOf(i) === `${principal}/${project}`).length;
  }

  /** Tokens of `principal`'s `project` in hot. */
  poolHotTokens(principal: Principal, project: "a" | "b"): number {
    return this.tiers.hot.filter((i) => poolOf(i) === `${principal}/${project}`).reduce((s, i) => s + i.tokens, 0);
  }
}
