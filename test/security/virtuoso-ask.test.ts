// Red team, issue 24 finding 12: a Virtuoso 7.2 that answers ASK as a one-column binding `__ASK_RETVAL`
// (1, or no row for false) instead of the `boolean` member made every ASK UNAVAILABLE. The run's Virtuoso
// answers `boolean`, so a proxy in front of the REAL Virtuoso turns each ASK into the query Virtuoso compiles
// it to (`SELECT (1 AS ?__ASK_RETVAL) ... LIMIT 1`): the answers the backend reads are Virtuoso's own bytes.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SparqlEndpointGraphBackend } from "../../src/adapters/sparql-endpoint/sparql-endpoint-graph-backend.js";
import { startVirtuoso, type VirtuosoInstance } from "../support/engines/virtuoso.js";
import { A, A_TRIPLES, EX, viewOf } from "../graph/graph-fixtures.js";

const OPTS = { timeoutMs: 20_000 };

let virtuoso: VirtuosoInstance;
let proxy: http.Server;
let proxyUrl: string;
const rewritten: string[] = [];

/** Forwards to Virtuoso, rewriting an ASK query into the one-column SELECT Virtuoso 7.2 compiles it to. */
function askAsRetvalProxy(target: URL): http.Server {
  return http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      let body = Buffer.concat(parts).toString("utf8");
      const form = new URLSearchParams(body);
      const query = form.get("query");
      if (query && /^\s*ASK\b/i.test(query)) {
        form.set("query", `${query.replace(/^\s*ASK\b/i, "SELECT (1 AS ?__ASK_RETVAL) WHERE")} LIMIT 1`);
        body = form.toString();
        rewritten.push(query);
      }
      const headers = { ...req.headers, host: target.host, "content-length": String(Buffer.byteLength(body)) };
      const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on("error", () => res.destroy());
      up.end(body);
    });
  });
}

beforeAll(async () => {
  virtuoso = await startVirtuoso();
  proxy = askAsRetvalProxy(new URL(virtuoso.authQueryUrl));
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/sparql-auth`;
}, 180_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await virtuoso?.stop();
});

async function backendAt(url: string): Promise<SparqlEndpointGraphBackend> {
  return SparqlEndpointGraphBackend.open({
    queryUrl: url,
    updateUrl: url,
    user: virtuoso.user,
    password: virtuoso.password,
    maxResults: 100,
  });
}

describe("ASK on Virtuoso, in both answer forms", () => {
  it("the run's Virtuoso as it answers (boolean member)", async () => {
    const backend = await backendAt(virtuoso.authQueryUrl);
    try {
      await backend.putTriples(A, A_TRIPLES, true);
      expect(await backend.query(viewOf([A]), "ASK { ?s ?p ?o }", OPTS)).toEqual({ form: "ASK", boolean: true, exhaustive: true });
      expect(await backend.query(viewOf([A]), `ASK { ?s <${EX}nowhere> ?o }`, OPTS)).toEqual({
        form: "ASK",
        boolean: false,
        exhaustive: true,
      });
    } finally {
      await backend.close();
    }
  });

  it("Virtuoso's one-column __ASK_RETVAL answer: true and false, not UNAVAILABLE", async () => {
    const backend = await backendAt(proxyUrl);
    try {
      await backend.putTriples(A, A_TRIPLES, true);
      rewritten.length = 0;
      expect(await backend.query(viewOf([A]), "ASK { ?s ?p ?o }", OPTS)).toEqual({ form: "ASK", boolean: true, exhaustive: true });
      expect(await backend.query(viewOf([A]), `ASK { ?s <${EX}nowhere> ?o }`, OPTS)).toEqual({
        form: "ASK",
        boolean: false,
        exhaustive: true,
      });
      expect(rewritten).toHaveLength(2);
    } finally {
      await backend.close();
    }
  });
});
