import { askAnswer, readNTriples, readSparqlJsonResults } from "../../src/adapters/sparql-endpoint/sparql-results-reader.js";

/** The text in chunks of `size` characters, as a response body may arrive. */
async function* chunks(text: string, size: number): AsyncIterable<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

const SELECT = JSON.stringify({
  head: { vars: ["s", "o"] },
  results: {
    bindings: [
      { s: { type: "uri", value: "http://e/a" }, o: { type: "literal", value: 'brace } and "quote" ] inside', "xml:lang": "en" } },
      { s: { type: "bnode", value: "b0" }, o: { type: "typed-literal", value: "5", datatype: "http://www.w3.org/2001/XMLSchema#int" } },
      { s: { type: "uri", value: "http://e/c" } },
    ],
  },
});

describe("streamed SPARQL JSON results", () => {
  it.each([1, 7, 4096])("reads every binding whatever the chunking (%i characters)", async (size) => {
    let stopped = 0;
    const r = await readSparqlJsonResults(chunks(SELECT, size), 10, () => stopped++);
    expect(r).toEqual({ kind: "bindings", variables: ["s", "o"], rows: JSON.parse(SELECT).results.bindings, exhaustive: true });
    expect(stopped).toBe(0);
  });

  it("stops reading at the cap and says the answer is not exhaustive", async () => {
    let stopped = 0;
    let read = 0;
    async function* counted() {
      for await (const c of chunks(SELECT, 5)) {
        read += c.length;
        yield c;
      }
    }
    const r = await readSparqlJsonResults(counted(), 1, () => stopped++);
    expect(r).toMatchObject({ kind: "bindings", exhaustive: false });
    expect(r.kind === "bindings" && r.rows.length).toBe(1);
    expect(stopped).toBe(1);
    expect(read).toBeLessThan(SELECT.length);
  });

  it("reads ASK answers and empty results", async () => {
    expect(await readSparqlJsonResults(chunks('{ "head": {}, "boolean": true }', 3), 10, () => undefined)).toEqual({
      kind: "boolean",
      value: true,
    });
    expect(await readSparqlJsonResults(chunks('{"head":{"vars":["x"]},"results":{"bindings":[]}}', 2), 10, () => undefined)).toEqual({
      kind: "bindings",
      variables: ["x"],
      rows: [],
      exhaustive: true,
    });
  });

  it("refuses a truncated answer instead of returning part of it as whole", async () => {
    await expect(readSparqlJsonResults(chunks(SELECT.slice(0, SELECT.length - 10), 16), 10, () => undefined)).rejects.toThrow(/truncated/);
  });
});

describe("streamed N-Triples", () => {
  const NT =
    '<http://e/a>\t<http://e/p>\t"esc \\" \\n \\u00e9"@en-us .\n# a comment\n_:b1 <http://e/p> "5"^^<http://www.w3.org/2001/XMLSchema#int> .\n<http://e/a> <http://e/q> <http://e/b> .\n';

  it.each([1, 9, 4096])("reads every triple whatever the chunking (%i characters)", async (size) => {
    const r = await readNTriples(chunks(NT, size), 10, () => undefined);
    expect(r.exhaustive).toBe(true);
    expect(r.triples).toEqual([
      [
        { kind: "iri", value: "http://e/a" },
        { kind: "iri", value: "http://e/p" },
        { kind: "literal", value: 'esc " \n é', language: "en-us" },
      ],
      [
        { kind: "blank", value: "b1" },
        { kind: "iri", value: "http://e/p" },
        { kind: "literal", value: "5", datatype: "http://www.w3.org/2001/XMLSchema#int" },
      ],
      [
        { kind: "iri", value: "http://e/a" },
        { kind: "iri", value: "http://e/q" },
        { kind: "iri", value: "http://e/b" },
      ],
    ]);
  });

  it("stops at the cap", async () => {
    let stopped = 0;
    const r = await readNTriples(chunks(NT, 4), 2, () => stopped++);
    expect(r.triples.length).toBe(2);
    expect(r.exhaustive).toBe(false);
    expect(stopped).toBe(1);
  });
});

describe("ASK answers in either form", () => {
  const read = (doc: unknown) => readSparqlJsonResults(chunks(JSON.stringify(doc), 7), 10, () => undefined);
  const retval = (value: string) => ({
    head: { link: [], vars: ["__ASK_RETVAL"] },
    results: { distinct: false, ordered: true, bindings: [{ __ASK_RETVAL: { type: "typed-literal", datatype: `${XSD_INTEGER}`, value } }] },
  });
  const XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer";

  it("reads the standard boolean member", async () => {
    expect(askAnswer(await read({ head: { link: [] }, boolean: true }))).toBe(true);
    expect(askAnswer(await read({ head: {}, boolean: false }))).toBe(false);
  });

  it("reads Virtuoso 7.2's one-column __ASK_RETVAL binding: 1 is true, 0 or no row is false", async () => {
    expect(askAnswer(await read(retval("1")))).toBe(true);
    expect(askAnswer(await read(retval("0")))).toBe(false);
    expect(askAnswer(await read({ head: { vars: ["__ASK_RETVAL"] }, results: { bindings: [] } }))).toBe(false);
    expect(
      askAnswer(
        await read({ head: { vars: ["__ask_retval"] }, results: { bindings: [{ __ask_retval: { type: "literal", value: "1" } }] } }),
      ),
    ).toBe(true);
  });

  it("refuses anything else as no answer", async () => {
    expect(
      askAnswer(await read({ head: { vars: ["x"] }, results: { bindings: [{ x: { type: "literal", value: "1" } }] } })),
    ).toBeUndefined();
    expect(
      askAnswer(
        await read({
          head: { vars: ["__ASK_RETVAL"] },
          results: { bindings: [retval("1").results.bindings[0], retval("1").results.bindings[0]] },
        }),
      ),
    ).toBeUndefined();
    expect(askAnswer(await read(retval("maybe")))).toBeUndefined();
    expect(askAnswer(await read({ head: { vars: [] } }))).toBeUndefined();
  });
});
