import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OxigraphGraphBackend } from "../../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { SparqlEndpointGraphBackend } from "../../src/adapters/sparql-endpoint/sparql-endpoint-graph-backend.js";
import type { GraphBackend } from "../../src/ports/graph-backend.js";
import { startVirtuoso, type VirtuosoInstance } from "../support/engines/virtuoso.js";
import { LUBM_Q1, LUBM_Q14, lubmUniversity, type LubmUniversity } from "../support/lubm-data.js";
import { viewOf } from "./graph-fixtures.js";

/** Four universities, one resource graph each. */
const RESOURCES = ["01JKBMN0AAAAAAAAAAAAAAAAAA", "01JKBMN1AAAAAAAAAAAAAAAAAA", "01JKBMN2AAAAAAAAAAAAAAAAAA", "01JKBMN3AAAAAAAAAAAAAAAAAA"];
const universities: LubmUniversity[] = RESOURCES.map((_, i) => lubmUniversity(i, 1000 + i));
const OPTS = { timeoutMs: 30_000 };

let virtuoso: VirtuosoInstance;
let dir: string;
let engines: { name: string; graph: GraphBackend }[];

beforeAll(async () => {
  virtuoso = await startVirtuoso();
  dir = mkdtempSync(join(tmpdir(), "acms-lubm-"));
  const oxigraph = await OxigraphGraphBackend.open({ path: join(dir, "graph.db") });
  const endpoint = await SparqlEndpointGraphBackend.open({
    queryUrl: virtuoso.authQueryUrl,
    updateUrl: virtuoso.authQueryUrl,
    user: virtuoso.user,
    password: virtuoso.password,
  });
  engines = [
    { name: "oxigraph", graph: oxigraph },
    { name: "virtuoso", graph: endpoint },
  ];
  for (const { graph } of engines) {
    for (let i = 0; i < RESOURCES.length; i++) await graph.putTriples(RESOURCES[i], universities[i].triples, true);
  }
}, 180_000);

afterAll(async () => {
  for (const e of engines ?? []) await e.graph.close();
  await virtuoso?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function count(graph: GraphBackend, scope: string[], query: string): Promise<number> {
  const r = await graph.query(viewOf(scope), query, OPTS);
  if (r.form !== "SELECT") throw new Error("SELECT expected");
  expect(r.exhaustive).toBe(true);
  return new Set(r.rows.map((row) => row.X.value)).size;
}

describe("LUBM-style Q1 and Q14 answer the same on Oxigraph and on Virtuoso", () => {
  const scopes: [string, string[]][] = [
    ["every university", RESOURCES],
    ["university 0 only", [RESOURCES[0]]],
    ["universities 1 and 2", [RESOURCES[1], RESOURCES[2]]],
  ];
  it.each(scopes)("Q1 and Q14 over %s", async (_title, scope) => {
    const picked = scope.map((id) => universities[RESOURCES.indexOf(id)]);
    const expectedQ1 = picked.reduce((n, u) => n + u.q1, 0);
    const expectedQ14 = picked.reduce((n, u) => n + u.q14, 0);
    for (const { graph } of engines) {
      expect(await count(graph, scope, LUBM_Q1)).toBe(expectedQ1);
      expect(await count(graph, scope, LUBM_Q14)).toBe(expectedQ14);
    }
  });

  it("the data set is big enough to tell scopes apart", () => {
    expect(universities[0].q1).toBeGreaterThan(0);
    expect(universities.every((u) => u.q14 > 20)).toBe(true);
  });
});
