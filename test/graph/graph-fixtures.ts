import type { RdfTerm, RdfTriple } from "../../src/domain/rdf-term.js";
import type { ScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { viewOver } from "../support/view-over.js";

/** Three resources: A and B share subjects (so a leak would show), C is never in any scope but "all". */
export const A = "01JAAAAAAAAAAAAAAAAAAAAAAA";
export const B = "01JBBBBBBBBBBBBBBBBBBBBBBB";
export const C = "01JCCCCCCCCCCCCCCCCCCCCCCC";

export const EX = "http://example.org/";
export const XSD = "http://www.w3.org/2001/XMLSchema#";

export const iri = (v: string): RdfTerm => ({ kind: "iri", value: v.includes(":") ? v : EX + v });
export const lit = (value: string, extra: { datatype?: string; language?: string } = {}): RdfTerm => ({ kind: "literal", value, ...extra });
export const blank = (label: string): RdfTerm => ({ kind: "blank", value: label });
export const triple = (s: RdfTerm, p: RdfTerm, o: RdfTerm): RdfTriple => ({ subject: s, predicate: p, object: o });

/** A's graph: alice -> bob -> _:a1 -> carol (a chain for Traverse), plus every kind of literal. */
export const A_TRIPLES: RdfTriple[] = [
  triple(iri("alice"), iri("knows"), iri("bob")),
  triple(iri("alice"), iri("name"), lit("Alice", { language: "en" })),
  triple(iri("alice"), iri("age"), lit("30", { datatype: `${XSD}integer` })),
  triple(iri("alice"), iri("note"), lit('plain "quoted"\nline')),
  triple(iri("bob"), iri("knows"), blank("a1")),
  triple(blank("a1"), iri("knows"), iri("carol")),
  triple(iri("carol"), iri("name"), lit("Carol")),
];

/** B's graph: the same subjects with secrets, and an edge that would lead Traverse out of A. */
export const B_TRIPLES: RdfTriple[] = [
  triple(iri("alice"), iri("secret"), lit("B-secret")),
  triple(iri("bob"), iri("secret"), lit("B-bob-secret")),
  triple(iri("carol"), iri("knows"), iri("dave")),
  triple(iri("dave"), iri("secret"), lit("B-dave-secret")),
];

export const C_TRIPLES: RdfTriple[] = [triple(iri("alice"), iri("secret"), lit("C-secret"))];

/** A view over `resourceIds`, as the access interceptor would build it. */
export function viewOf(resourceIds: readonly string[], scopeId = "01JSCOPESCOPESCOPESCOPESCO"): ScopedBackendView {
  return viewOver(resourceIds, { scopeId, owner: "tester", projectNames: ["local/graph"] });
}

/** A canonical one-line form of a triple, to compare sets. */
export function tripleKey(t: RdfTriple): string {
  const term = (x: RdfTerm) => `${x.kind}:${x.value}${x.datatype ? `^^${x.datatype}` : ""}${x.language ? `@${x.language}` : ""}`;
  return `${term(t.subject)} ${term(t.predicate)} ${term(t.object)}`;
}

export function keysOf(triples: readonly RdfTriple[]): string[] {
  return triples.map((t) => tripleKey({ subject: t.subject, predicate: t.predicate, object: t.object })).sort();
}
