/** The tiers, top (fastest, smallest) to bottom. */
export const TIER_NAMES = ["hot", "warm", "cold"] as const;

/** Where a fragment lives: hot (memory), warm (SQLite), cold (files, summarised). */
export type TierName = (typeof TIER_NAMES)[number];

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

/** The tier one step down, or undefined below cold. */
export function tierBelow(tier: TierName): TierName | undefined {
  return tier === "hot" ? "warm" : tier === "warm" ? "cold" : undefined;
}

/** The tier one step up, or undefined above hot. */
export function tierAbove(tier: TierName): TierName | undefined {
  return tier === "cold" ? "warm" : tier === "warm" ? "hot" : undefined;
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
