/**
 * Every fact about the tiers, in one table, top (fastest, smallest) to bottom: the order is the array's;
 * `budget` is what the tier's budget counts (hot: tokens, what an agent's context window spends; warm and
 * cold: fragments, what their storage spends) and `budgetKey` the TierBudgets field that sets it;
 * `storage` is where the embedded tier store keeps its fragments; `inMemory` whether the service keeps
 * the content in memory (the others are read from the store on demand); `summarised` whether a fragment
 * moved there is summarised on the way in.
 */
export const TIERS = [
  {
    name: "hot",
    budget: "tokens",
    budgetKey: "maxTokensHot",
    storage: "memory, written through to the tier store",
    inMemory: true,
    summarised: false,
  },
  {
    name: "warm",
    budget: "fragments",
    budgetKey: "maxDecisionsWarm",
    storage: "the tier store's database (SQLite)",
    inMemory: false,
    summarised: false,
  },
  {
    name: "cold",
    budget: "fragments",
    budgetKey: "maxDecisionsCold",
    storage: "files under the data directory",
    inMemory: false,
    summarised: true,
  },
] as const;

/** Where a fragment lives: one of TIERS. */
export type TierName = (typeof TIERS)[number]["name"];

/** The facts of one tier. */
export type TierFacts = (typeof TIERS)[number];

/** The tier names, top to bottom. */
export const TIER_NAMES: readonly TierName[] = TIERS.map((t) => t.name);

/** The facts of `tier`. */
export function tierFacts(tier: TierName): TierFacts {
  return TIERS[TIER_NAMES.indexOf(tier)];
}

/**
 * A fragment of agent context as the tier service keeps it. `content` is always the full original;
 * `summary` is filled when the fragment went to cold (what role views show in its place).
 * `accessSeq` orders least-recently-used: a process-monotonic number, so ties of the wall clock never
 * reorder two accesses.
 *
 * Fragment ids are namespaced per principal: a fragment is identified by (`owner`, `id`), so two principals
 * may use the same client-chosen id independently and neither can learn that the other holds it.
 */
export interface TierFragment {
  /** The principal that stored it (its scope's owner): the namespace of `id`. Never sent on the wire. */
  owner: string;
  /** The id the client chose (or the server assigned), unique within `owner`. */
  id: string;
  tier: TierName;
  projectName: string;
  /** The resource the fragment is about; empty when none. */
  resourceId: string;
  metadata: Record<string, string>;
  content: string;
  summary: string;
  tokenCount: number;
  createdAt: Date;
  updatedAt: Date;
  lastAccessedAt: Date;
  accessSeq: number;
}

/** The tier one step down, or undefined below the bottom one. */
export function tierBelow(tier: TierName): TierName | undefined {
  return TIER_NAMES[TIER_NAMES.indexOf(tier) + 1];
}

/** The tier one step up, or undefined above the top one. */
export function tierAbove(tier: TierName): TierName | undefined {
  const i = TIER_NAMES.indexOf(tier);
  return i > 0 ? TIER_NAMES[i - 1] : undefined;
}

/**
 * The internal key of a fragment, unique per (`owner`, `id`): the policy and the service's index need one
 * string per fragment across all principals (one index holds every principal's fragments). The owner is length-prefixed, so
 * no two (owner, id) pairs share a key whatever characters they hold. Internal only: never on the wire.
 * @example fragmentKey("writer", "plan-1") // "6:writer/plan-1"
 */
export function fragmentKey(owner: string, id: string): string {
  return `${owner.length}:${owner}/${id}`;
}
