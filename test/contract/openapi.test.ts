import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestServer } from "../support/test-server.js";
import { seedWorld, startContractServer, type ContractWorld } from "./contract-fixture.js";

/** The committed document (scripts/generate-api-docs.sh writes it from the protos; CI checks it is current). */
const FILE = join(__dirname, "..", "..", "openapi", "acms.openapi.json");
const committed = readFileSync(FILE, "utf8");

interface Schema {
  $ref?: string;
  properties?: Record<string, unknown>;
}
interface Operation {
  requestBody: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
const doc = JSON.parse(committed) as OpenApi;

function resolve(schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace("#/components/schemas/", "");
  const found = doc.components.schemas[name];
  if (!found) throw new Error(`the document names ${schema.$ref} but does not define it`);
  return found;
}

const ORIGIN = "https://app.example";

describe("OpenAPI: the HTTP/JSON surface, described and served", () => {
  let t: TestServer;
  let w: ContractWorld;
  beforeAll(async () => {
    t = await startContractServer({ ACMS_CORS_ORIGINS: ORIGIN });
    w = await seedWorld(t);
  });
  afterAll(async () => {
    await t.close(true);
  });

  test("GET /openapi.json answers the committed document, with no key, with CORS for a listed origin", async () => {
    const res = await fetch(`${t.server.url}/openapi.json`, { headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(await res.text()).toBe(committed);
  });

  test("POST /openapi.json is refused with 405 (the document is read-only)", async () => {
    const res = await fetch(`${t.server.url}/openapi.json`, { method: "POST", body: "{}" });
    expect(res.status).toBe(405);
    await res.arrayBuffer();
  });

  /** One RPC of every service, its body and headers as a caller would write them from the document alone. */
  const calls: { path: string; principal: string; scope?: (w: ContractWorld) => string; body: (w: ContractWorld) => object }[] = [
    { path: "/acms.v1.RegistryService/ListProjects", principal: "writer", body: () => ({}) },
    {
      path: "/acms.v1.IndexService/DeleteDocuments",
      principal: "writer",
      body: (w) => ({ resourceId: w.web, paths: ["no/such/file.md"] }),
    },
    { path: "/acms.v1.ScopeService/GetScope", principal: "writer", body: (w) => ({ scopeId: w.apiScope }) },
    { path: "/acms.v1.TextBackendService/Search", principal: "writer", scope: (w) => w.apiScope, body: () => ({ query: "common" }) },
    {
      path: "/acms.v1.VectorBackendService/SimilaritySearch",
      principal: "writer",
      scope: (w) => w.bulkScope,
      body: () => ({ embedding: [0, 0, 0, 1], topK: 2 }),
    },
    {
      path: "/acms.v1.GraphBackendService/SparqlQuery",
      principal: "writer",
      scope: (w) => w.apiScope,
      body: () => ({ query: "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 1" }),
    },
    { path: "/acms.v1.RagService/HybridSearch", principal: "writer", scope: (w) => w.apiScope, body: () => ({ query: "common", topK: 3 }) },
    { path: "/acms.v1.ContextTierService/GetMetrics", principal: "writer", scope: (w) => w.apiScope, body: () => ({}) },
  ];

  test("the calls below cover every service the document describes", () => {
    const services = new Set(Object.keys(doc.paths).map((p) => p.split("/")[1]));
    expect(new Set(calls.map((c) => c.path.split("/")[1]))).toEqual(services);
  });

  test.each(calls.map((c) => [c.path, c] as const))(
    "%s: POST application/json per the document answers 200 and its listed fields",
    async (path, c) => {
      const operation = doc.paths[path]?.post;
      expect(operation).toBeDefined();
      const requestSchema = resolve(operation!.requestBody.content["application/json"]!.schema);
      const body = c.body(w);
      for (const field of Object.keys(body)) expect(Object.keys(requestSchema.properties ?? {})).toContain(field);

      const headers: Record<string, string> = {
        "content-type": "application/json",
        "connect-protocol-version": "1",
        authorization: `Bearer ${t.keys[c.principal]}`,
      };
      if (c.scope) headers["acms-scope"] = c.scope(w);
      const res = await fetch(`${t.server.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      const answer = (await res.json()) as Record<string, unknown>;
      expect({ status: res.status, answer }).toEqual({ status: 200, answer: expect.any(Object) });

      const responseSchema = resolve(operation!.responses["200"]!.content!["application/json"]!.schema);
      const listed = Object.keys(responseSchema.properties ?? {});
      expect(listed.length).toBeGreaterThan(0);
      for (const field of Object.keys(answer)) expect(listed).toContain(field);
    },
  );
});
