import { z } from "zod";
import { TermKind, type Term, type Triple } from "../../gen/acms/v1/graph_pb.js";
import { Tier, type Fragment } from "../../gen/acms/v1/tiers_pb.js";
import type { Timestamp } from "@bufbuild/protobuf/wkt";

/**
 * The zod shapes of what the tools answer (their output schemas), and the mapping from the wire's messages
 * into them: snake_case names as API.md spells the fields, enums as lower-case words, uint64 as numbers.
 */

export const scopeIdArg = z
  .string()
  .optional()
  .describe(
    "Optional: run under this scope id instead of the connection's scope. Only the connection's own scope or a scope " +
      "narrowed from it (the scope_id that narrow_scope answered) is accepted; any other is refused.",
  );

export const metadataShape = z.record(z.string(), z.string());

export const hitShape = z.object({
  uko_uri: z.string().describe("the unit's address; pass it to fetch, or read it as an MCP resource"),
  resource_id: z.string(),
  path: z.string(),
  content: z.string(),
  score: z.number().describe("in [0, 1], higher is better"),
  metadata: metadataShape,
  contributions: z
    .array(z.object({ source: z.string(), rank: z.number(), score: z.number() }))
    .optional()
    .describe("hybrid mode: where the hit ranked in each source that found it"),
});

export const termShape = z.object({
  kind: z.enum(["iri", "literal", "blank"]),
  value: z.string(),
  datatype: z.string().optional(),
  language: z.string().optional(),
});

export const tripleShape = z.object({ subject: termShape, predicate: termShape, object: termShape });

export const scopedAnswer = {
  scope_id: z.string().describe("the scope the call ran under"),
  exhaustive: z.boolean().describe("false when a limit cut the answer"),
};

export const indexGeneration = z.number().describe("the index generation the answer was read at");

export const fragmentShape = z.object({
  fragment_id: z.string(),
  content: z.string(),
  tier: z.enum(["hot", "warm", "cold", "unspecified"]),
  project_name: z.string(),
  resource_id: z.string(),
  metadata: metadataShape,
  token_count: z.number(),
  summary: z.string(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
});

export type TermOut = z.infer<typeof termShape>;
export type TripleOut = z.infer<typeof tripleShape>;
export type FragmentOut = z.infer<typeof fragmentShape>;

const TERM_KINDS: Record<TermKind, TermOut["kind"]> = {
  [TermKind.UNSPECIFIED]: "literal",
  [TermKind.IRI]: "iri",
  [TermKind.LITERAL]: "literal",
  [TermKind.BLANK]: "blank",
};

export function termOut(t: Term | undefined): TermOut {
  const out: TermOut = { kind: TERM_KINDS[t?.kind ?? TermKind.UNSPECIFIED], value: t?.value ?? "" };
  if (t?.datatype) out.datatype = t.datatype;
  if (t?.language) out.language = t.language;
  return out;
}

export function tripleOut(t: Triple): TripleOut {
  return { subject: termOut(t.subject), predicate: termOut(t.predicate), object: termOut(t.object) };
}

export const TIER_NAMES: Record<Tier, FragmentOut["tier"]> = {
  [Tier.UNSPECIFIED]: "unspecified",
  [Tier.HOT]: "hot",
  [Tier.WARM]: "warm",
  [Tier.COLD]: "cold",
};

function isoOf(ts: Timestamp | undefined): string | undefined {
  if (!ts) return undefined;
  return new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6)).toISOString();
}

export function fragmentOut(f: Fragment | undefined): FragmentOut {
  const out: FragmentOut = {
    fragment_id: f?.fragmentId ?? "",
    content: f?.content ?? "",
    tier: TIER_NAMES[f?.tier ?? Tier.UNSPECIFIED],
    project_name: f?.projectName ?? "",
    resource_id: f?.resourceId ?? "",
    metadata: { ...(f?.metadata ?? {}) },
    token_count: f?.tokenCount ?? 0,
    summary: f?.summary ?? "",
  };
  const created = isoOf(f?.createdAt);
  const updated = isoOf(f?.updatedAt);
  if (created) out.created_at = created;
  if (updated) out.updated_at = updated;
  return out;
}

/**
 * The fields an `isError` result's structured content carries: MCP clients (the TypeScript SDK's among them)
 * check structured content against the output schema even on an error, so every output schema holds them.
 */
const errorFields = {
  code: z.string().optional().describe("on isError only: the gRPC code name (PERMISSION_DENIED, INVALID_ARGUMENT, NOT_FOUND...)"),
  message: z.string().optional().describe("on isError only: what went wrong, for people"),
  resource_ids: z.array(z.string()).optional().describe("on a refusal: the offending resource ids"),
  project_names: z.array(z.string()).optional().describe("on a refusal: the offending project names"),
  scope_project_names: z.array(z.string()).optional().describe("on a refusal: the projects of the scope the call ran under"),
  reason: z.string().optional().describe("on a refusal: why, in a word"),
  field_violations: z
    .array(z.object({ field: z.string(), description: z.string() }))
    .optional()
    .describe("on INVALID_ARGUMENT: the arguments at fault"),
  retry_after_ms: z.number().optional().describe("on RESOURCE_EXHAUSTED (over quota): when a retry may succeed, in ms"),
};

type Optionals<S extends Record<string, z.ZodType>> = { [K in keyof S]: z.ZodOptional<S[K]> };

/**
 * A tool's output schema: its answer's fields (all present on success; optional in the schema because an
 * `isError` result carries the error fields instead) and the error fields. A field both name (a refusal's
 * `project_names`, say) keeps the answer's type, which is the same.
 */
export function toolOutput<S extends Record<string, z.ZodType>>(shape: S): Optionals<S> & typeof errorFields {
  const optional = Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as Optionals<S>;
  return { ...errorFields, ...optional };
}
