import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyRing } from "../../src/application/access/key-ring.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { startServer } from "../../src/server/composition/server.js";
import { quietLog } from "../support/quiet-log.js";
import { iri, triple, viewOf } from "../graph/graph-fixtures.js";

// A PutTriples that reached the graph after an erasure removed it takes the graph away again once it sees the
// erasure (Indexer.putTriples); a crash in between leaves the graph of a resource the registry no longer
// knows. Started over such a data directory (the embedded registry and graph store), the server sweeps it in
// the background: that resource's triples go, the others stay.

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "acms-orphan-graphs-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const config = () => loadConfig({ ACMS_HOST: "127.0.0.1", ACMS_PORT: "0", ACMS_DATA_DIR: dataDir, ACMS_GRAPH_WORKERS: "1" });
const OPTS = { timeoutMs: 20_000 };

it("a server started over the graph of an erased resource erases it, and only it", async () => {
  const seeding = await createBackends(config());
  const { registry } = seeding;
  await registry.createProject("local/graph");
  const register = async (alias: string) =>
    (await registry.registerResource({ id: "", project: "local/graph", alias, kind: "docs", parentIds: [], metadata: {} })).id;
  const [kept, orphaned] = [await register("kept"), await register("orphaned")];
  for (const id of [kept, orphaned]) await seeding.graph!.putTriples(id, [triple(iri(`${id}-s`), iri("p"), iri("o"))], false);
  // The leftover: the erasure finished in the registry while the late write's graph stayed.
  expect(await registry.beginErasure(orphaned)).toBeDefined();
  await registry.finishErasure(orphaned);
  expect((await seeding.graph!.resourceIds!()).sort()).toEqual([kept, orphaned].sort());
  await seeding.close();

  const backends = await createBackends(config(), { deferLoads: true });
  const server = await startServer({ config: config(), keys: new KeyRing([]), backends, log: quietLog() });
  try {
    const graph = backends.graph!;
    // In the background, after the pending erasures (none here): polled, the test's timeout bounds it.
    while ((await graph.resourceIds!()).includes(orphaned)) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await graph.resourceIds!()).toEqual([kept]);
    await backends.graphReady;
    const found = await graph.query(viewOf([kept, orphaned]), "SELECT ?s WHERE { ?s ?p ?o }", OPTS);
    expect(found.form === "SELECT" ? found.rows.map((r) => r.s?.value) : found).toEqual([iri(`${kept}-s`).value]);
  } finally {
    await server.close();
  }
}, 60_000);
