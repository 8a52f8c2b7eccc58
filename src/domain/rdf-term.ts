/** An RDF term, lossless: IRIs, literals with datatype or language, blank nodes. */
export interface RdfTerm {
  kind: "iri" | "literal" | "blank";
  /** The IRI, the literal's lexical form, or the blank node label. */
  value: string;
  /** The literal's datatype IRI; undefined means xsd:string (or rdf:langString with a language). */
  datatype?: string;
  /** The literal's language tag. */
  language?: string;
}

/** An RDF triple. */
export interface RdfTriple {
  subject: RdfTerm;
  predicate: RdfTerm;
  object: RdfTerm;
}
