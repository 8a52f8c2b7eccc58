/**
 * A public IR test collection read from disk in the BEIR layout (`corpus.jsonl`, `queries.jsonl`,
 * `qrels/<split>.tsv`: the format SciFact, NFCorpus, FiQA, TREC-COVID and the other BEIR sets are published
 * in), so the relevance rows of `npm run bench` can be taken on a real collection wherever one can be
 * downloaded (`BENCH_IR_COLLECTION=<dir>`); the machines of this project reach none, hence the planted
 * collection (bench/planted-relevance.ts) by default.
 *
 * Documents are renamed `d<n>` (their line order) so engines can be handed uniform paths; a document's text is
 * its title and its text. Only queries with at least one positive judgment are kept, as BEIR's evaluation does.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JudgedCollection, JudgedQuery } from "./planted-relevance.js";

function jsonLines(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, i) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`${file}:${i + 1}: not a JSON object`);
      }
    });
}

function field(row: Record<string, unknown>, name: string, file: string): string {
  const v = row[name];
  if (typeof v !== "string") throw new Error(`${file}: a row has no string "${name}"`);
  return v;
}

/** Reads the collection in `dir` with the judgments of `split` (default `test`). */
export function readBeirCollection(dir: string, split = "test"): JudgedCollection {
  const corpusFile = join(dir, "corpus.jsonl");
  const queriesFile = join(dir, "queries.jsonl");
  const qrelsFile = join(dir, "qrels", `${split}.tsv`);
  const idOf = new Map<string, string>();
  const documents = jsonLines(corpusFile).map((row, n) => {
    const id = `d${n}`;
    idOf.set(field(row, "_id", corpusFile), id);
    const title = typeof row.title === "string" ? row.title : "";
    const text = field(row, "text", corpusFile);
    return { id, text: title === "" ? text : `${title}\n${text}` };
  });
  const queryText = new Map(jsonLines(queriesFile).map((row) => [field(row, "_id", queriesFile), field(row, "text", queriesFile)]));
  const grades = new Map<string, Map<string, number>>();
  for (const [i, line] of readFileSync(qrelsFile, "utf8").split("\n").entries()) {
    const cols = line.trim().split("\t");
    if (cols.length < 3 || (i === 0 && !/^-?\d+$/.test(cols[2]))) continue; // blank line, or the header
    const [queryId, docId, score] = cols;
    const grade = Number(score);
    if (!Number.isInteger(grade)) throw new Error(`${qrelsFile}:${i + 1}: the score is not an integer`);
    const id = idOf.get(docId);
    if (id === undefined || grade <= 0) continue; // judged documents missing from the corpus, or not relevant
    let g = grades.get(queryId);
    if (!g) grades.set(queryId, (g = new Map()));
    g.set(id, grade);
  }
  const queries: JudgedQuery[] = [];
  for (const [queryId, g] of grades) {
    const text = queryText.get(queryId);
    if (text !== undefined) queries.push({ text, grades: g });
  }
  if (queries.length === 0) throw new Error(`${dir}: no query of ${queriesFile} has a positive judgment in ${qrelsFile}`);
  return { documents, queries };
}
