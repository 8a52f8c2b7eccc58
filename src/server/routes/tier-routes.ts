import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { ContextTierService, DisplacedFragmentSchema, Role, Tier, type DisplacedFragment } from "../../../gen/acms/v1/tiers_pb.js";
import type { ActorRole } from "../../domain/actor-role.js";
import { InvalidArgumentError } from "../../domain/errors.js";
import type { TierName } from "../../domain/tier-fragment.js";
import { viewOf } from "../access/handler-context.js";
import { fragmentToWire, WIRE_TIER } from "./fragment-to-wire.js";
import type { RouteDeps } from "../composition/server-deps.js";
import type { Displacement } from "../../application/tiers/tier-service.js";

const TIER_OF: Partial<Record<Tier, TierName>> = { [Tier.HOT]: "hot", [Tier.WARM]: "warm", [Tier.COLD]: "cold" };
const ROLE_OF: Partial<Record<Role, ActorRole>> = {
  [Role.STRATEGIST]: "strategist",
  [Role.EXECUTOR]: "executor",
  [Role.REVIEWER]: "reviewer",
};

/** A specified tier, or INVALID_ARGUMENT naming `field`. */
function tierOf(field: string, tier: Tier): TierName {
  const t = TIER_OF[tier];
  if (!t)
    throw InvalidArgumentError.field(
      field,
      tier === Tier.UNSPECIFIED ? "must be specified (TIER_HOT, TIER_WARM or TIER_COLD)" : `unknown tier ${tier}`,
    );
  return t;
}

function displacedToWire(d: Displacement): DisplacedFragment {
  return create(DisplacedFragmentSchema, {
    fragmentId: d.id,
    fromTier: WIRE_TIER[d.from],
    toTier: d.to ? WIRE_TIER[d.to] : Tier.UNSPECIFIED,
    evicted: d.evicted,
  });
}

/**
 * ContextTierService: translates the wire into TierService calls in the call's scoped view (the access
 * interceptor has already resolved the scope and refused out-of-scope project and resource refs).
 */
export function tierRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const tiers = deps.services.tiers;
  return (router) => {
    router.service(ContextTierService, {
      async storeFragment(req, ctx) {
        const f = req.fragment;
        if (!f) throw InvalidArgumentError.field("fragment", "must be set");
        const tier = f.tier === Tier.UNSPECIFIED ? undefined : tierOf("fragment.tier", f.tier);
        const result = await tiers.storeFragment(viewOf(ctx), {
          id: f.fragmentId,
          content: f.content,
          tier,
          projectName: f.projectName,
          resourceId: f.resourceId,
          metadata: f.metadata,
        });
        return { fragment: fragmentToWire(result.fragment), displaced: result.displaced.map(displacedToWire) };
      },
      async getFragment(req, ctx) {
        return { fragment: fragmentToWire(await tiers.getFragment(viewOf(ctx), req.fragmentId)) };
      },
      async promoteFragment(req, ctx) {
        const result = await tiers.promoteFragment(viewOf(ctx), req.fragmentId);
        return { fragment: fragmentToWire(result.fragment), displaced: result.displaced.map(displacedToWire) };
      },
      async demoteFragment(req, ctx) {
        const result = await tiers.demoteFragment(viewOf(ctx), req.fragmentId);
        return { fragment: fragmentToWire(result.fragment), displaced: result.displaced.map(displacedToWire) };
      },
      async evictLru(req, ctx) {
        const tier = tierOf("tier", req.tier);
        return { fragmentIds: await tiers.evictLru(viewOf(ctx), tier, req.count) };
      },
      async getForActor(req, ctx) {
        const role = ROLE_OF[req.role];
        if (!role) {
          throw InvalidArgumentError.field(
            "role",
            req.role === Role.UNSPECIFIED
              ? "must be specified (ROLE_STRATEGIST, ROLE_EXECUTOR or ROLE_REVIEWER)"
              : `unknown role ${req.role}`,
          );
        }
        const view = viewOf(ctx);
        const fragments = await tiers.getForActor(view, role, req.projectNames, req.includeFullContent);
        // No limit cuts the list: every fragment the role sees in the scope is answered (the budgets bound it).
        return { fragments: fragments.map(fragmentToWire), scopeId: view.scope.scopeId, exhaustive: true };
      },
      async getMetrics(_req, ctx) {
        const m = await tiers.getMetrics(viewOf(ctx));
        return {
          hotHits: BigInt(m.hotHits),
          hotMisses: BigInt(m.hotMisses),
          warmHits: BigInt(m.warmHits),
          warmMisses: BigInt(m.warmMisses),
          coldHits: BigInt(m.coldHits),
          misses: BigInt(m.misses),
          hotPopulation: BigInt(m.population.hot),
          warmPopulation: BigInt(m.population.warm),
          coldPopulation: BigInt(m.population.cold),
          hotTokens: BigInt(m.tokens.hot),
          warmTokens: BigInt(m.tokens.warm),
          coldTokens: BigInt(m.tokens.cold),
          promotions: BigInt(m.promotions),
          demotions: BigInt(m.demotions),
          evictions: BigInt(m.evictions),
          hotMaxTokens: BigInt(deps.config.tiers.maxTokensHot),
          warmMaxDecisions: BigInt(deps.config.tiers.maxDecisionsWarm),
          coldMaxDecisions: BigInt(deps.config.tiers.maxDecisionsCold),
        };
      },
      async deleteFragment(req, ctx) {
        return { deleted: await tiers.deleteFragment(viewOf(ctx), req.fragmentId) };
      },
    });
  };
}
