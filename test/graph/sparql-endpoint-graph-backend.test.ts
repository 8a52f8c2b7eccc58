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
  name: "SPARQL 1.1 Protocol endpoint (Virtuoso Open Source 7, digest auth)",
  create: (_dataDir, opts) =>
    SparqlEndpointGraphBackend.open({
      queryUrl: virtuoso.authQueryUrl,
      updateUrl: virtuoso.authQueryUrl,
      user: virtuoso.user,
      password: virtuoso.password,
      maxResults: opts.maxResults,
    }),
  skip: {
    "SELECT keeps projection order and leaves unbound variables out":
      "Virtuoso's ORDER BY puts plain literals before language-tagged ones (\"Carol\" < \"Alice\"@en); SPARQL leaves that order open and Oxigraph compares lexical forms; a query's ORDER BY cannot be rewritten to match in general (README, \"Graph on a SPARQL endpoint\")",
  },
});
