/**
 * Trace context: a `traceparent` in a tool call's `_meta` reaches the RPC the tool runs as its W3C header (so
 * the server's span continues the caller's trace); without one, the connection's own `traceparent` does. The
 * tools run over the real routes and interceptors in memory (Connect's router transport, the server's own
 * interceptor chain), with the official SDK client linked in memory; one interceptor in front records headers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { generateKey, hashKey, KeyRing } from "../../src/application/access/key-ring.js";
import { createAcmsMcpServer, ScopeLineage, type McpCallContext } from "../../src/mcp/index.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { createRoutes } from "../../src/server/composition/server.js";
import { inProcessTransport } from "../../src/server/mcp/in-process-transport.js";
import { quietLog } from "../support/quiet-log.js";
import { call, ok } from "./mcp-client.js";

const CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const CONNECTION = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

test("_meta.traceparent (else the connection's) is the traceparent header of the RPC a tool runs", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "acms-mcp-trace-"));
  const config = loadConfig({ ACMS_DATA_DIR: dataDir });
  const backends = await createBackends(config);
  try {
    const key = generateKey();
    const keys = new KeyRing([{ name: "admin", key_sha256: hashKey(key), projects: ["*/*"], write: true }]);
    const { routes, interceptors } = createRoutes({ config, keys, backends, onInternalError: () => undefined, log: quietLog() });
    const seen: { method: string; traceparent: string | null }[] = [];
    const record: Interceptor = (next) => async (req) => {
      seen.push({ method: req.method.name, traceparent: req.header.get("traceparent") });
      return next(req);
    };
    const transport = inProcessTransport(routes, [record, ...interceptors]);
    const headers = { authorization: `Bearer ${key}` };
    await createClient(RegistryService, transport).createProject({ name: "local/api" }, { headers });
    const scopeId = (await createClient(ScopeService, transport).resolveScope({ projects: ["local/api"] }, { headers })).scope!.scopeId;
    const ctx: McpCallContext = { transport, authorization: `Bearer ${key}`, scopeId, traceparent: CONNECTION };
    const server = createAcmsMcpServer(() => ctx, new ScopeLineage(), "test");
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "trace-test", version: "1" });
    await client.connect(clientSide);
    seen.length = 0;
    ok(await call(client, "recall", {}, { traceparent: CALLER }));
    ok(await call(client, "recall", {}));
    expect(seen).toEqual([
      { method: "GetForActor", traceparent: CALLER },
      { method: "GetForActor", traceparent: CONNECTION },
    ]);
    await client.close();
  } finally {
    await backends.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
