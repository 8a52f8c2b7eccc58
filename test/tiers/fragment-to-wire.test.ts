import { create, equals, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { FragmentSchema, GetFragmentResponseSchema, Tier } from "../../gen/acms/v1/tiers_pb.js";
import type { TierFragment } from "../../src/domain/tier-fragment.js";
import { fragmentToWire } from "../../src/server/routes/fragment-to-wire.js";

function fragment(over: Partial<TierFragment>): TierFragment {
  const at = new Date(1_764_626_400_123);
  return {
    owner: "writer",
    id: "plan-1",
    tier: "warm",
    projectName: "local/api",
    resourceId: "01JD0000000000000000000000",
    metadata: { step: "1", by: "executor" },
    content: "remember the plan",
    summary: "",
    tokenCount: 3,
    createdAt: at,
    updatedAt: at,
    lastAccessedAt: at,
    accessSeq: 7,
    ...over,
  };
}

/** The fragment as create() and timestampFromDate() make it: what fragmentToWire must equal, field for field. */
function viaCreate(f: TierFragment) {
  return create(FragmentSchema, {
    fragmentId: f.id,
    content: f.content,
    tier: { hot: Tier.HOT, warm: Tier.WARM, cold: Tier.COLD }[f.tier],
    resourceId: f.resourceId,
    projectName: f.projectName,
    metadata: f.metadata,
    tokenCount: f.tokenCount,
    createdAt: timestampFromDate(f.createdAt),
    updatedAt: timestampFromDate(f.updatedAt),
    lastAccessedAt: timestampFromDate(f.lastAccessedAt),
    summary: f.summary,
  });
}

test("fragmentToWire makes the message create() makes, to the millisecond, and the same bytes", () => {
  const cases = [
    fragment({}),
    fragment({
      tier: "hot",
      resourceId: "",
      metadata: {},
      createdAt: new Date(0),
      updatedAt: new Date(999),
      lastAccessedAt: new Date(1000),
    }),
    fragment({
      tier: "cold",
      summary: "the plan",
      createdAt: new Date(-1),
      updatedAt: new Date(-1_500),
      lastAccessedAt: new Date(4_102_444_800_001),
    }),
  ];
  for (const f of cases) {
    const wire = fragmentToWire(f);
    expect(equals(FragmentSchema, wire, viaCreate(f))).toBe(true);
    expect(wire.lastAccessedAt).toEqual(viaCreate(f).lastAccessedAt);
    expect(Buffer.from(toBinary(GetFragmentResponseSchema, create(GetFragmentResponseSchema, { fragment: wire })))).toEqual(
      Buffer.from(toBinary(GetFragmentResponseSchema, create(GetFragmentResponseSchema, { fragment: viaCreate(f) }))),
    );
  }
});

test("fragmentToWire sets every field of Fragment (a field added to the proto must be added there too)", () => {
  const wire = fragmentToWire(fragment({}));
  for (const field of FragmentSchema.fields) expect(Object.prototype.hasOwnProperty.call(wire, field.localName)).toBe(true);
});
