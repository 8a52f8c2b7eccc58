import type { TierName } from "./tier-fragment.js";

/** The roles of agents that read context, each seeing a different depth of it. */
export type ActorRole = "strategist" | "executor" | "reviewer";

const TIERS_OF: Record<ActorRole, readonly TierName[]> = {
  strategist: ["hot", "warm", "cold"],
  executor: ["hot", "warm"],
  reviewer: ["hot"],
};

/**
 * The tiers a role sees: a strategist plans over everything (cold too, as summaries), an executor
 * works from what is current (hot and warm), a reviewer checks only what is in play (hot).
 */
export function tiersForRole(role: ActorRole): readonly TierName[] {
  return TIERS_OF[role];
}
