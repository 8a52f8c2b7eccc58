import { InvalidArgumentError } from "../../src/domain/errors.js";
import { normaliseTriple, SKOLEM_PREFIX, sparqlTerm, termOfJson, termOfNTriples } from "../../src/adapters/sparql-endpoint/endpoint-terms.js";

const XSD = "http://www.w3.org/2001/XMLSchema#";

describe("terms between the service and a SPARQL endpoint", () => {
  it("blank nodes travel as skolem IRIs and come back as the same blank nodes", () => {
    const t = normaliseTriple({ subject: { kind: "blank", value: "_:b1" }, predicate: { kind: "iri", value: "http://e/p" }, object: { kind: "blank", value: "b2" } }, "triples[0]");
    expect(sparqlTerm(t.subject)).toBe(`<${SKOLEM_PREFIX}b1>`);
    expect(termOfJson({ type: "uri", value: `${SKOLEM_PREFIX}b2` })).toEqual({ kind: "blank", value: "b2" });
    expect(termOfNTriples({ kind: "iri", value: `${SKOLEM_PREFIX}b1` })).toEqual({ kind: "blank", value: "b1" });
    expect(termOfJson({ type: "bnode", value: "nodeID://b10006" })).toEqual({ kind: "blank", value: "b10006" });
  });

  it("an IRI under the skolem prefix cannot be written (it would come back as a blank node)", () => {
    expect(() => normaliseTriple({ subject: { kind: "iri", value: `${SKOLEM_PREFIX}x` }, predicate: { kind: "iri", value: "http://e/p" }, object: { kind: "literal", value: "o" } }, "triples[3]")).toThrow(
      InvalidArgumentError,
    );
  });

  it("literals are escaped for SPARQL Update, language tags lower-cased and xsd:string dropped", () => {
    const t = normaliseTriple(
      { subject: { kind: "iri", value: "http://e/s" }, predicate: { kind: "iri", value: "http://e/p" }, object: { kind: "literal", value: 'a "q" \\ \n\t\u0001', language: "en-US" } },
      "t",
    );
    expect(sparqlTerm(t.object)).toBe('"a \\"q\\" \\\\ \\n\\t\\u0001"@en-us');
    expect(normaliseTriple({ subject: { kind: "iri", value: "http://e/s" }, predicate: { kind: "iri", value: "http://e/p" }, object: { kind: "literal", value: "x", datatype: `${XSD}string` } }, "t").object).toEqual({
      kind: "literal",
      value: "x",
    });
  });

  it("Virtuoso's booleans and doubles are answered in the embedded engine's canonical form", () => {
    expect(termOfJson({ type: "typed-literal", value: "1", datatype: `${XSD}boolean` })).toEqual({ kind: "literal", value: "true", datatype: `${XSD}boolean` });
    expect(termOfJson({ type: "typed-literal", value: "0", datatype: `${XSD}boolean` })).toEqual({ kind: "literal", value: "false", datatype: `${XSD}boolean` });
    expect(termOfJson({ type: "typed-literal", value: "1.0", datatype: `${XSD}double` })).toEqual({ kind: "literal", value: "1", datatype: `${XSD}double` });
    expect(termOfJson({ type: "typed-literal", value: "1500.0", datatype: `${XSD}float` })).toEqual({ kind: "literal", value: "1500", datatype: `${XSD}float` });
    expect(termOfJson({ type: "typed-literal", value: "INF", datatype: `${XSD}double` })).toEqual({ kind: "literal", value: "INF", datatype: `${XSD}double` });
    expect(termOfJson({ type: "literal", value: "x", "xml:lang": "EN-us" })).toEqual({ kind: "literal", value: "x", language: "en-us" });
    expect(termOfJson({ type: "typed-literal", value: "x", datatype: `${XSD}string` })).toEqual({ kind: "literal", value: "x" });
  });
});
