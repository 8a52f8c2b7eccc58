import { join } from "node:path";
import { OxigraphGraphBackend } from "../../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { runGraphBackendSuite } from "./graph-backend-suite.js";

runGraphBackendSuite({
  ownsStore: true,
  name: "Oxigraph (SQLite-backed, worker thread)",
  create: (dataDir, opts) => OxigraphGraphBackend.open({ path: join(dataDir, "graph.db"), maxResults: opts.maxResults }),
});
