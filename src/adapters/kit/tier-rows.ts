import { tierFacts, type TierName } from "../../domain/tier-fragment.js";
import type { LoadedFragment } from "../../ports/tier-store.js";

/** The columns of `tier_fragments` every tier engine stores alike. */
export interface TierRow {
  owner: string;
  id: string;
  tier: TierName;
  project_name: string;
  resource_id: string;
  /** A JSON object. */
  metadata: string;
  /** The content of a fragment whose tier keeps it in the row; null otherwise. */
  content: string | null;
  summary: string;
  token_count: number;
  created_at: number;
  updated_at: number;
  last_accessed_at: number;
  access_seq: number;
}

/** A stored fragment as the tier service loads it at start: content only for the tiers held in memory. */
export function loadedFragmentOf(r: TierRow): LoadedFragment {
  return {
    owner: r.owner,
    id: r.id,
    tier: r.tier,
    projectName: r.project_name,
    resourceId: r.resource_id,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    content: tierFacts(r.tier).inMemory ? (r.content ?? "") : undefined,
    summary: r.summary,
    tokenCount: r.token_count,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    lastAccessedAt: new Date(r.last_accessed_at),
    accessSeq: r.access_seq,
  };
}
