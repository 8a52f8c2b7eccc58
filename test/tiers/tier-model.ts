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

/** Whether a call as `principal` through a full or narrow view sees `item`: its own principal's, and allowed by the view. */
function sees(principal: Principal, narrow: boolean, item: Item): boolean {
  return item.principal === principal && visibleTo(item.owner, narrow);
}

/**
 * An independent reference of the tier semantics, written as plainly as possible (arrays in LRU order,
 * linear scans), that the property tests run side by side with the real service. A fragment is
 * (principal, id); the budgets, the LRU order and the counters are shared by both principals.
 */
export class TierModel {
  readonly tiers: Record<TierName, Item[]> = { hot: [], warm: [], cold: [] };
  readonly counters = { hotHits: 0, hotMisses: 0, warmHits: 0, warmMisses: 0, coldHits: 0, misses: 0, promotions: 0, demotions: 0, evictions: 0 };

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
          this.counters.hotMisses++;
          this.counters.warmMisses++;
          this.counters.misses++;
          return "not_found";
        }
        if (found.tier === "hot") this.counters.hotHits++;
        else if (found.tier === "warm") {
          this.counters.hotMisses++;
          this.counters.warmHits++;
        } else {
          this.counters.hotMisses++;
          this.counters.warmMisses++;
          this.counters.coldHits++;
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
        if (op.kind === "promote") this.counters.promotions++;
        else this.counters.demotions++;
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
            this.counters.demotions++;
          } else this.counters.evictions++;
        }
        this.rebalance();
        return "ok";
      }
    }
  }

  /** The ids of `principal`'s fragments in `tier`, least recently used first. */
  ids(tier: TierName, principal: Principal): string[] {
    return this.tiers[tier].filter((i) => i.principal === principal).map((i) => i.id);
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

  private over(tier: TierName): boolean {
    if (tier === "hot") return this.tiers.hot.reduce((s, i) => s + i.tokens, 0) > this.budgets.maxTokensHot;
    return this.tiers[tier].length > (tier === "warm" ? this.budgets.maxDecisionsWarm : this.budgets.maxDecisionsCold);
  }

  private rebalance(): void {
    for (;;) {
      const tier = (["hot", "warm", "cold"] as const).find((t) => this.over(t));
      if (!tier) return;
      const lru = this.tiers[tier].shift()!;
      const to = BELOW[tier];
      if (to) {
        this.tiers[to].push(lru);
        this.counters.demotions++;
      } else this.counters.evictions++;
    }
  }
}
