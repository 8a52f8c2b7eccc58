import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readBeirCollection } from "../../bench/beir-collection.js";

describe("readBeirCollection (the bench's public-collection reader, BEIR layout)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "acms-beir-"));
    mkdirSync(join(dir, "qrels"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (corpus: object[], queries: object[], qrels: string) => {
    writeFileSync(join(dir, "corpus.jsonl"), corpus.map((r) => JSON.stringify(r)).join("\n") + "\n");
    writeFileSync(join(dir, "queries.jsonl"), queries.map((r) => JSON.stringify(r)).join("\n"));
    writeFileSync(join(dir, "qrels", "test.tsv"), qrels);
  };

  it("renames documents by line order, joins title and text, and keeps each query's positive grades", () => {
    write(
      [
        { _id: "4983", title: "Microstructural development", text: "Alterations of the architecture" },
        { _id: "5836", title: "", text: "Induction of myelodysplasia" },
        { _id: "7912", text: "BC1 RNA" },
      ],
      [
        { _id: "1", text: "0-dimensional biomaterials show inductive properties." },
        { _id: "3", text: "1,000 genomes project" },
        { _id: "5", text: "a query with no judgment" },
      ],
      "query-id\tcorpus-id\tscore\n1\t4983\t1\n1\t7912\t2\n3\t5836\t1\n3\t7912\t0\n3\tmissing-doc\t1\n\n",
    );
    const col = readBeirCollection(dir);
    expect(col.documents).toEqual([
      { id: "d0", text: "Microstructural development\nAlterations of the architecture" },
      { id: "d1", text: "Induction of myelodysplasia" },
      { id: "d2", text: "BC1 RNA" },
    ]);
    expect(col.queries.map((q) => [q.text, [...q.grades]])).toEqual([
      [
        "0-dimensional biomaterials show inductive properties.",
        [
          ["d0", 1],
          ["d2", 2],
        ],
      ],
      ["1,000 genomes project", [["d1", 1]]],
    ]);
  });

  it("refuses a collection whose files are malformed or hold no judged query", () => {
    write([{ _id: "a", text: "x" }], [{ _id: "q", text: "x" }], "query-id\tcorpus-id\tscore\nq\ta\t0\n");
    expect(() => readBeirCollection(dir)).toThrow(/no query .* has a positive judgment/);
    write([{ _id: "a", text: "x" }], [{ _id: "q", text: "x" }], "query-id\tcorpus-id\tscore\nq\ta\tone\n");
    expect(() => readBeirCollection(dir)).toThrow(/the score is not an integer/);
    writeFileSync(join(dir, "corpus.jsonl"), "{not json}\n");
    expect(() => readBeirCollection(dir)).toThrow(/corpus.jsonl:1: not a JSON object/);
    write([{ id: "a", text: "x" }], [{ _id: "q", text: "x" }], "q\ta\t1\n");
    expect(() => readBeirCollection(dir)).toThrow(/no string "_id"/);
  });
});
