import { getOption, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { ref, RefKind } from "../../../gen/acms/v1/options_pb.js";
import { InvalidArgumentError } from "../../domain/errors.js";

/**
 * The most marked values one repeated field may hold. Every RPC caps its lists far lower (FetchContent at
 * the results cap, scopes at a few thousand); this bound only keeps the access check itself cheap, so a
 * request with millions of references is refused before each is looked up.
 */
export const MAX_REFS_PER_FIELD = 10_000;

/** One marked value found in a request: what it refers to, where, and the value. */
export interface RequestRef {
  kind: RefKind;
  /** The field path, e.g. `fragment.project_name` or `uko_uris[2]`. */
  field: string;
  value: string;
}

/** How to reach the marked fields of one message type: computed once per type, then cached. */
interface RefPlan {
  /** Marked string fields (singular or repeated). */
  direct: Array<{ field: DescField; kind: RefKind }>;
  /** Message fields whose type (transitively) holds marked fields. */
  nested: Array<{ field: DescField; plan: RefPlan }>;
}

const plans = new WeakMap<DescMessage, RefPlan | null>();

function planFor(desc: DescMessage, visiting: Set<DescMessage> = new Set()): RefPlan | null {
  const cached = plans.get(desc);
  if (cached !== undefined) return cached;
  if (visiting.has(desc)) return null;
  visiting.add(desc);
  const plan: RefPlan = { direct: [], nested: [] };
  for (const field of desc.fields) {
    const kind = getOption(field, ref);
    if (kind !== RefKind.UNSPECIFIED && (field.fieldKind === "scalar" || field.fieldKind === "list")) {
      plan.direct.push({ field, kind });
      continue;
    }
    const sub =
      field.fieldKind === "message"
        ? field.message
        : field.fieldKind === "list" && field.listKind === "message"
          ? field.message
          : field.fieldKind === "map" && field.mapKind === "message"
            ? field.message
            : undefined;
    if (sub) {
      const subPlan = planFor(sub, visiting);
      if (subPlan) plan.nested.push({ field, plan: subPlan });
    }
  }
  visiting.delete(desc);
  const result = plan.direct.length > 0 || plan.nested.length > 0 ? plan : null;
  plans.set(desc, result);
  return result;
}

function fieldValue(message: Record<string, unknown>, field: DescField): unknown {
  if (field.oneof) {
    const o = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
    return o?.case === field.localName ? o.value : undefined;
  }
  return message[field.localName];
}

function walk(message: Record<string, unknown>, plan: RefPlan, prefix: string, out: RequestRef[]): void {
  for (const { field, kind } of plan.direct) {
    const v = fieldValue(message, field);
    const name = prefix + field.name;
    if (Array.isArray(v)) {
      if (v.length > MAX_REFS_PER_FIELD)
        throw InvalidArgumentError.field(name, `must have at most ${MAX_REFS_PER_FIELD} entries, got ${v.length}`);
      v.forEach((s, i) => out.push({ kind, field: `${name}[${i}]`, value: String(s) }));
    } else if (typeof v === "string" && v.length > 0) out.push({ kind, field: name, value: v });
  }
  for (const { field, plan: sub } of plan.nested) {
    const v = fieldValue(message, field);
    const name = prefix + field.name;
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) {
      if (v.length > MAX_REFS_PER_FIELD)
        throw InvalidArgumentError.field(name, `must have at most ${MAX_REFS_PER_FIELD} entries, got ${v.length}`);
      v.forEach((m, i) => walk(m as Record<string, unknown>, sub, `${name}[${i}].`, out));
    } else if (field.fieldKind === "map") {
      for (const [k, m] of Object.entries(v as Record<string, unknown>)) walk(m as Record<string, unknown>, sub, `${name}[${k}].`, out);
    } else walk(v as Record<string, unknown>, sub, `${name}.`, out);
  }
}

/**
 * Collects every value of a field marked with `(acms.v1.ref)` in `message`, nested and repeated too.
 * Empty singular strings are skipped (an absent optional reference names nothing). A repeated field of more
 * than MAX_REFS_PER_FIELD entries is INVALID_ARGUMENT naming it.
 * @example collectRefs(UpsertDocumentsRequestSchema, req) // [{ kind: RESOURCE_ID, field: "resource_id", value }]
 */
export function collectRefs(desc: DescMessage, message: Message): RequestRef[] {
  const plan = planFor(desc);
  if (!plan) return [];
  const out: RequestRef[] = [];
  walk(message as unknown as Record<string, unknown>, plan, "", out);
  return out;
}
