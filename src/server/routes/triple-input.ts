import { TermKind, type Term, type Triple } from "../../../gen/acms/v1/graph_pb.js";
import { InvalidArgumentError, type FieldViolation } from "../../domain/errors.js";
import type { RdfTerm, RdfTriple } from "../../domain/rdf-term.js";

const RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
const IRI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// Characters an IRIREF may not hold (SPARQL/Turtle grammar): controls, space, <>"{}|^`\
const IRI_FORBIDDEN = /[\u0000-\u0020<>"{}|^`\\]/u;
const BLANK_LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?$/;
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/;
/** The longest IRI, literal or label accepted. */
export const MAX_TERM_LENGTH = 64 * 1024;

function iriProblem(iri: string): string | undefined {
  if (iri.length === 0) return "the IRI is empty";
  if (iri.length > MAX_TERM_LENGTH) return `the IRI is longer than ${MAX_TERM_LENGTH} characters`;
  if (IRI_FORBIDDEN.test(iri)) return 'the IRI contains a space, a control character or one of <>"{}|^`\\';
  if (!IRI_SCHEME.test(iri)) return "the IRI is not absolute (no scheme such as http:)";
  return undefined;
}

function termOf(term: Term | undefined, field: string, allowed: readonly TermKind[], v: FieldViolation[]): RdfTerm | undefined {
  const bad = (description: string) => {
    v.push({ field, description });
    return undefined;
  };
  if (!term) return bad("is required");
  if (!allowed.includes(term.kind)) {
    const names = allowed.map((k) => TermKind[k]).join(" or ");
    return bad(`must be ${names}, got ${TermKind[term.kind] ?? term.kind}`);
  }
  if (term.kind !== TermKind.LITERAL && (term.datatype !== "" || term.language !== "")) {
    return bad("only a literal may have a datatype or a language");
  }
  switch (term.kind) {
    case TermKind.IRI: {
      const why = iriProblem(term.value);
      return why ? bad(why) : { kind: "iri", value: term.value };
    }
    case TermKind.BLANK:
      if (!BLANK_LABEL.test(term.value) || term.value.length > MAX_TERM_LENGTH) {
        return bad(`"${term.value.slice(0, 40)}" is not a blank node label (letters, digits, _ . -; no _: prefix)`);
      }
      return { kind: "blank", value: term.value };
    case TermKind.LITERAL: {
      if (term.value.length > MAX_TERM_LENGTH) return bad(`the literal is longer than ${MAX_TERM_LENGTH} characters`);
      if (term.language !== "" && !LANGUAGE_TAG.test(term.language)) return bad(`"${term.language.slice(0, 40)}" is not a language tag`);
      if (term.datatype !== "") {
        const why = iriProblem(term.datatype);
        if (why) return bad(`datatype: ${why}`);
        if (term.language !== "" && term.datatype !== RDF_LANG_STRING)
          return bad("a literal with a language must have no datatype or rdf:langString");
      }
      const out: RdfTerm = { kind: "literal", value: term.value };
      if (term.language !== "") out.language = term.language;
      else if (term.datatype !== "") out.datatype = term.datatype;
      return out;
    }
    default:
      return bad("has no kind");
  }
}

/**
 * Maps the wire triples of PutTriples to RDF triples without loss (literal datatype and language kept,
 * empty strings meaning "none"), checking every term: subject an IRI or blank node, predicate an IRI,
 * IRIs absolute and free of spaces and `<>"{}|^\``. Every bad term is reported at once, e.g.
 * `triples[3].predicate`.
 */
export function toRdfTriples(triples: readonly Triple[], field = "triples"): RdfTriple[] {
  const v: FieldViolation[] = [];
  const out: RdfTriple[] = [];
  triples.forEach((t, i) => {
    const at = `${field}[${i}]`;
    const subject = termOf(t.subject, `${at}.subject`, [TermKind.IRI, TermKind.BLANK], v);
    const predicate = termOf(t.predicate, `${at}.predicate`, [TermKind.IRI], v);
    const object = termOf(t.object, `${at}.object`, [TermKind.IRI, TermKind.BLANK, TermKind.LITERAL], v);
    if (subject && predicate && object) out.push({ subject, predicate, object });
  });
  if (v.length > 0) throw new InvalidArgumentError(v);
  return out;
}
