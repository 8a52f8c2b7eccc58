import { outputWidth, type CliIo } from "./cli-io.js";
import { formatTable, snippet } from "./format-table.js";

interface Ranked {
  score: number;
  ukoUri: string;
  content: string;
}

/** Prints ranked results as a table (rank, score, UKO URI, a snippet around the query), or "no results". */
export function printRanked(io: CliIo, results: Ranked[], query: string, note?: string): void {
  if (results.length === 0) {
    io.stdout.write(`no results${note ? ` (${note})` : ""}\n`);
    return;
  }
  const width = outputWidth(io);
  const fixed = 4 + 2 + 6 + 2 + Math.max(7, ...results.map((r) => r.ukoUri.length)) + 2 + String(results.length).length;
  const room = Math.max(20, width - fixed);
  const rows = results.map((r, i) => [String(i + 1), r.score.toFixed(4), r.ukoUri, snippet(r.content, query, room)]);
  io.stdout.write(formatTable(["RANK", "SCORE", "UKO_URI", "SNIPPET"], rows, width));
  if (note) io.stdout.write(`${note}\n`);
}
