import { create } from "@bufbuild/protobuf";
import { RowSchema, TermKind, TermSchema, TripleSchema, type Row, type Term, type Triple } from "../../../gen/acms/v1/graph_pb.js";
import type { RdfTerm, RdfTriple } from "../../domain/rdf-term.js";
import type { SparqlRow } from "../../ports/graph-backend.js";

const KINDS: Record<RdfTerm["kind"], TermKind> = { iri: TermKind.IRI, literal: TermKind.LITERAL, blank: TermKind.BLANK };

/** The wire form of an RDF term, lossless: an absent datatype or language becomes the empty string. */
export function toWireTerm(t: RdfTerm): Term {
  return create(TermSchema, { kind: KINDS[t.kind], value: t.value, datatype: t.datatype ?? "", language: t.language ?? "" });
}

/** The wire form of a triple (a result's resource id, when it carries one, is not sent). */
export function toWireTriple(t: RdfTriple): Triple {
  return create(TripleSchema, { subject: toWireTerm(t.subject), predicate: toWireTerm(t.predicate), object: toWireTerm(t.object) });
}

/** The wire form of a SELECT solution; unbound variables stay absent. */
export function toWireRow(row: SparqlRow): Row {
  const bindings: Record<string, Term> = {};
  for (const [name, term] of Object.entries(row)) bindings[name] = toWireTerm(term);
  return create(RowSchema, { bindings });
}
