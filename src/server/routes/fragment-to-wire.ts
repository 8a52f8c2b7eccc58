import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Tier, type Fragment } from "../../../gen/acms/v1/tiers_pb.js";
import type { TierFragment, TierName } from "../../domain/tier-fragment.js";

/** The wire enum of each tier. */
export const WIRE_TIER: Record<TierName, Tier> = { hot: Tier.HOT, warm: Tier.WARM, cold: Tier.COLD };

/**
 * The wire form of a fragment, written as the message object itself (protobuf-es messages are plain objects
 * named by `$typeName`; every field is given): `create` and `timestampFromDate` cost several times as much
 * per fragment, and a GetFragment answer is little else.
 */
export function fragmentToWire(f: TierFragment): Fragment {
  return {
    $typeName: "acms.v1.Fragment",
    fragmentId: f.id,
    content: f.content,
    tier: WIRE_TIER[f.tier],
    resourceId: f.resourceId,
    projectName: f.projectName,
    metadata: f.metadata,
    tokenCount: f.tokenCount,
    createdAt: timestampOf(f.createdAt),
    updatedAt: timestampOf(f.updatedAt),
    lastAccessedAt: timestampOf(f.lastAccessedAt),
    summary: f.summary,
  };
}

/** `date` as a google.protobuf.Timestamp, as timestampFromDate makes it (whole seconds down, nanos within them). */
function timestampOf(date: Date): Timestamp {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { $typeName: "google.protobuf.Timestamp", seconds: BigInt(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}
