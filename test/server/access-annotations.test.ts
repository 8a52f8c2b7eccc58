import { readdirSync } from "node:fs";
import { join } from "node:path";
import { getOption, hasOption, ScalarType, type DescField, type DescFile, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import { access, Access, ref, RefKind } from "../../gen/acms/v1/options_pb.js";

// Fail-closed access, checked on the generated registry: every RPC of every acms.v1 service names its
// access rule, and every request field that carries a resource id, a project name, a UKO URI or a graph
// IRI is marked with the matching (acms.v1.ref), so the access interceptor checks it. A field "carries"
// one when its name (or, for RDF terms, its type) says so; the rules are below.

const GEN = join(__dirname, "..", "..", "gen", "acms", "v1");

/** Every generated acms.v1 file (read from gen/, so a new .proto is walked without editing this test). */
function acmsFiles(): DescFile[] {
  const files: DescFile[] = [];
  for (const name of readdirSync(GEN)
    .filter((f) => f.endsWith("_pb.ts"))
    .sort()) {
    const mod = require(join(GEN, name)) as Record<string, unknown>;
    for (const v of Object.values(mod)) if ((v as DescFile | undefined)?.kind === "file") files.push(v as DescFile);
  }
  return files;
}

const methods: DescMethod[] = acmsFiles().flatMap((f) => f.services.flatMap((s) => s.methods));

/** The ref kind a field's name and type say it carries, or undefined when it carries none of them. */
function carries(field: DescField, owner: DescMessage): RefKind | undefined {
  const isString = (field.fieldKind === "scalar" || field.fieldKind === "list") && field.scalar === ScalarType.STRING;
  if (!isString) return undefined;
  const n = field.name;
  if (/(^|_)(uko_)?uris?$/.test(n)) return RefKind.UKO_URI;
  if (/^(subject|predicate|object|start|iri|graph|graph_iri|node)$/.test(n)) return RefKind.IRI;
  // An RDF term's value is an IRI (or a literal: the kind says which at run time).
  if (owner.typeName === "acms.v1.Term" && n === "value") return RefKind.IRI;
  if (/(^|_)(projects?|project_names?)$/.test(n)) return RefKind.PROJECT;
  if (n === "name" && /Project/.test(owner.name)) return RefKind.PROJECT;
  if (n === "id" || /_ids?$/.test(n) || /(^|_)resources?$/.test(n)) return RefKind.RESOURCE_ID;
  return undefined;
}

/**
 * Fields that carry a reference by the rules above and are deliberately unmarked, each with the reason
 * (as `<Service>/<Method> <field path>`). A new entry needs a reason a reviewer agrees with.
 */
const UNMARKED: Record<string, string> = {
  // A new resource's caller-chosen id: it names nothing that exists yet (checked by the handler to be a free ULID).
  "acms.v1.RegistryService/RegisterResource id": "the id of the resource being created",
  // Resolved inside `project` (marked and checked): an id answers only when it is linked into that project.
  "acms.v1.RegistryService/ResolveAlias alias_or_id": "resolved within the checked project only",
  // Aliases or ids resolved against the links of the scope's projects (marked and checked); a name
  // matching nothing there is INVALID_ARGUMENT, so they can never reach outside those projects.
  "acms.v1.ScopeService/ResolveScope include_resources": "resolved within the scope's checked projects",
  "acms.v1.ScopeService/ResolveScope exclude_resources": "resolved within the scope's checked projects",
  // API.md: denying an id the parent does not hold changes nothing (so an out-of-scope id is no violation).
  "acms.v1.ScopeService/NarrowScope deny_resource_ids": "an id outside the parent scope changes nothing, by contract",
  // Scope ids and fragment ids are namespaced per principal; the handlers answer NOT_FOUND for any other owner's.
  "acms.v1.ScopeService/GetScope scope_id": "owner-checked by the handler (NOT_FOUND for another principal's)",
  "acms.v1.ContextTierService/StoreFragment fragment.fragment_id": "fragment ids are per principal",
  "acms.v1.ContextTierService/GetFragment fragment_id": "fragment ids are per principal",
  "acms.v1.ContextTierService/PromoteFragment fragment_id": "fragment ids are per principal",
  "acms.v1.ContextTierService/DemoteFragment fragment_id": "fragment ids are per principal",
  "acms.v1.ContextTierService/DeleteFragment fragment_id": "fragment ids are per principal",
  // Triples are data written into the graph of the request's resource_id (marked, write-checked): an IRI
  // in them names no graph that the call reads.
  "acms.v1.IndexService/PutTriples triples.subject.value": "data stored in the checked resource's graph",
  "acms.v1.IndexService/PutTriples triples.predicate.value": "data stored in the checked resource's graph",
  "acms.v1.IndexService/PutTriples triples.object.value": "data stored in the checked resource's graph",
};

interface Finding {
  key: string;
  expected: RefKind;
  marked: RefKind;
}

/** Every string field of `desc` (recursively, through message, list and map fields) that carries a reference. */
function findings(method: DescMethod): Finding[] {
  const out: Finding[] = [];
  const walk = (desc: DescMessage, prefix: string, path: Set<DescMessage>) => {
    if (path.has(desc)) return;
    path.add(desc);
    for (const field of desc.fields) {
      const expected = carries(field, desc);
      if (expected !== undefined)
        out.push({ key: `${method.parent.typeName}/${method.name} ${prefix}${field.name}`, expected, marked: getOption(field, ref) });
      const sub =
        field.fieldKind === "message" ||
        (field.fieldKind === "list" && field.listKind === "message") ||
        (field.fieldKind === "map" && field.mapKind === "message")
          ? field.message
          : undefined;
      if (sub) walk(sub, `${prefix}${field.name}.`, path);
    }
    path.delete(desc);
  };
  walk(method.input, "", new Set());
  return out;
}

describe("fail-closed access annotations", () => {
  test("the walk covers every service of the contract", () => {
    const services = [...new Set(methods.map((m) => m.parent.typeName))].sort();
    expect(services).toEqual(
      [
        "acms.v1.ContextTierService",
        "acms.v1.GraphBackendService",
        "acms.v1.IndexService",
        "acms.v1.RagService",
        "acms.v1.RegistryService",
        "acms.v1.ScopeService",
        "acms.v1.TextBackendService",
        "acms.v1.VectorBackendService",
      ].sort(),
    );
    expect(methods.length).toBeGreaterThanOrEqual(34);
  });

  test("every RPC has an explicit (acms.v1.access) option naming a rule", () => {
    const missing = methods
      .filter((m) => !hasOption(m, access) || getOption(m, access) === Access.UNSPECIFIED)
      .map((m) => `${m.parent.typeName}/${m.name}`);
    expect(missing).toEqual([]);
  });

  test("every request field that carries a resource id, project, UKO URI or graph IRI has the matching (acms.v1.ref)", () => {
    const all = methods.flatMap(findings);
    const wrong = all
      .filter((f) => !(f.key in UNMARKED) && f.marked !== f.expected)
      .map((f) => `${f.key}: expected ${RefKind[f.expected]}, marked ${RefKind[f.marked]}`);
    expect(wrong).toEqual([]);
    // The rules do find the marked fields (a walk that found nothing would pass the check above).
    expect(all.filter((f) => f.marked === f.expected).map((f) => f.key)).toEqual(
      expect.arrayContaining([
        "acms.v1.IndexService/UpsertDocuments resource_id",
        "acms.v1.RagService/FetchContent uko_uris",
        "acms.v1.GraphBackendService/Traverse start",
        "acms.v1.ContextTierService/StoreFragment fragment.project_name",
        "acms.v1.RegistryService/CreateProject name",
      ]),
    );
  });

  test("every deliberately unmarked field still exists, carries a reference and stays unmarked", () => {
    const byKey = new Map(methods.flatMap(findings).map((f) => [f.key, f]));
    const stale = Object.keys(UNMARKED).filter((k) => byKey.get(k)?.marked !== RefKind.UNSPECIFIED);
    expect(stale).toEqual([]);
  });
});
