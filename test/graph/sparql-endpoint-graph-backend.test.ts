import { SparqlEndpointGraphBackend } from "../../src/adapters/sparql-endpoint/sparql-endpoint-graph-backend.js";
import { startVirtuoso, type VirtuosoInstance } from "../support/engines/virtuoso.js";
import { runGraphBackendSuite } from "./graph-backend-suite.js";

let virtuoso: VirtuosoInstance;

beforeAll(async () => {
  virtuoso = await startVirtuoso();
}, 180_000);

afterAll(async () => {
  await virtuoso?.stop();
});

runGraphBackendSuite({
  ownsStore: false,
  name: "SPARQL 1.1 Protocol endpoint (Virtuoso Open Source 7, digest auth)",
  create: (_dataDir, opts) =>
    SparqlEndpointGraphBackend.open({
      queryUrl: virtuoso.authQueryUrl,
      updateUrl: virtuoso.authQueryUrl,
      user: virtuoso.user,
      password: virtuoso.password,
      maxResults: opts.maxResults,
    }),
});
