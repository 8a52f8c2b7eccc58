import { createClient, createRouterTransport, type Transport } from "@connectrpc/connect";
import { quietLog } from "./quiet-log.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import type { Backends } from "../../src/server/composition/backends.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { generateKey, hashKey, KeyRing } from "../../src/application/access/key-ring.js";
import { createRoutes } from "../../src/server/composition/server.js";
import { authInterceptor } from "./test-server.js";

/**
 * Runs `fn` against the real routes served in memory (`createRouterTransport`, no network) over fresh
 * backends that `change` may alter first (say, drop the vector backend to test UNIMPLEMENTED), as a
 * principal allowed everywhere, with project local/api created and `fn` given a transport scoped to it.
 * The backends and their data directory are removed afterwards, whatever `fn` does.
 */
export async function withScopedRouterTransport(
  opts: { env?: Record<string, string>; change: (backends: Backends) => void | Promise<void> },
  fn: (scoped: Transport) => Promise<void>,
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "acms-router-"));
  const config = loadConfig({ ACMS_DATA_DIR: dataDir, ...opts.env });
  const backends = await createBackends(config);
  try {
    await opts.change(backends);
    const key = generateKey();
    const keys = new KeyRing([{ name: "admin", key_sha256: hashKey(key), projects: ["*/*"], write: true }]);
    const { routes, interceptors } = createRoutes({ config, keys, backends, onInternalError: () => undefined, log: quietLog() });
    const transport = (scopeId?: string) =>
      createRouterTransport(routes, { router: { interceptors }, transport: { interceptors: [authInterceptor(key, scopeId)] } });
    await createClient(RegistryService, transport()).createProject({ name: "local/api" });
    const scopeId = (await createClient(ScopeService, transport()).resolveScope({ projects: ["local/api"] })).scope!.scopeId;
    await fn(transport(scopeId));
  } finally {
    await backends.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
