import { mkdtempSync, rmSync } from "node:fs";
import { quietLog } from "../support/quiet-log.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import { ScopeViolationSchema } from "../../gen/acms/v1/errors_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import type { ResourceScope } from "../../src/domain/scope.js";
import { newUlid } from "../../src/domain/ulid-id.js";
import type { ScopePage, ScopeStore, ScopeUsage } from "../../src/ports/scope-store.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { generateKey, hashKey, KeyRing } from "../../src/application/access/key-ring.js";
import { createRoutes, type ServerDeps } from "../../src/server/composition/server.js";
import { failure } from "../support/call-failure.js";
import { authInterceptor } from "../support/test-server.js";

// The in-memory level: the real routes and interceptor over a router transport (the composition root's
// backends on a temp directory), with the scope store swapped for a counting wrapper, so the tests can see what the handlers ask of the port.

class CountingScopeStore implements ScopeStore {
  saves: ResourceScope[] = [];
  gets = 0;
  constructor(private readonly inner: ScopeStore) {}
  async save(scope: ResourceScope, caps?: ScopeUsage): Promise<boolean> {
    this.saves.push(scope);
    return this.inner.save(scope, caps);
  }
  get(scopeId: string): Promise<ResourceScope | undefined> {
    this.gets += 1;
    return this.inner.get(scopeId);
  }
  listByOwner(owner: string, page: { limit: number; before?: string }): Promise<ScopePage> {
    return this.inner.listByOwner(owner, page);
  }
  usageOf(owner: string): Promise<ScopeUsage> {
    return this.inner.usageOf(owner);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

let dataDir: string;
let scopes: CountingScopeStore;
let deps: ServerDeps;
const keys = { alice: generateKey(), bob: generateKey() };

function client<S extends DescService>(service: S, who: keyof typeof keys, scopeId?: string): Client<S> {
  const { routes, interceptors } = createRoutes({ ...deps, log: quietLog() });
  const transport = createRouterTransport(routes, {
    router: { interceptors },
    transport: { interceptors: [authInterceptor(keys[who], scopeId)] },
  });
  return createClient(service, transport);
}

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "acms-router-"));
  const config = loadConfig({ ACMS_DATA_DIR: dataDir });
  const backends = await createBackends(config);
  scopes = new CountingScopeStore(backends.scopes);
  backends.scopes = scopes;
  deps = {
    config,
    keys: new KeyRing([
      { name: "alice", key_sha256: hashKey(keys.alice), projects: ["team/*"], write: true },
      { name: "bob", key_sha256: hashKey(keys.bob), projects: ["team/*"], write: false },
    ]),
    backends,
  };
  const reg = client(RegistryService, "alice");
  await reg.createProject({ name: "team/a" });
  await reg.registerResource({ project: "team/a", alias: "r1", kind: "repo" });
});
afterEach(async () => {
  await deps.backends.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test("ResolveScope saves exactly one immutable scope owned by the caller", async () => {
  const { scope } = await client(ScopeService, "bob").resolveScope({ projects: ["team/a"] });
  expect(scopes.saves).toHaveLength(1);
  expect(scopes.saves[0].owner).toBe("bob");
  expect(scopes.saves[0].scopeId).toBe(scope!.scopeId);
});

test("a refused ResolveScope saves nothing", async () => {
  const err = await failure(client(ScopeService, "bob").resolveScope({ projects: ["team/a"], excludeResources: ["r2"] }));
  expect(err.code).toBe(Code.InvalidArgument);
  expect(scopes.saves).toHaveLength(0);
});

test("NarrowScope reads the parent through the interceptor, and the child carries the parent's id", async () => {
  const { scope } = await client(ScopeService, "bob").resolveScope({ projects: ["team/a"] });
  const { scope: child } = await client(ScopeService, "bob", scope!.scopeId).narrowScope({ excludePaths: ["x/**"] });
  expect(child!.parentScopeId).toBe(scope!.scopeId);
  expect(scopes.saves.map((s) => s.scopeId)).toEqual([scope!.scopeId, child!.scopeId]);
});

test("the scope of another principal is NOT_FOUND through the header, and nothing is saved", async () => {
  const { scope } = await client(ScopeService, "alice").resolveScope({ projects: ["team/a"] });
  const err = await failure(client(ScopeService, "bob", scope!.scopeId).narrowScope({}));
  expect(err.code).toBe(Code.NotFound);
  expect(scopes.saves).toHaveLength(1);
});

test("ValidateResourceScope names every offender in the ScopeViolation", async () => {
  const { scope } = await client(ScopeService, "bob").resolveScope({ projects: ["team/a"] });
  const [x, y] = [newUlid(), newUlid()];
  const err = await failure(
    client(ScopeService, "bob", scope!.scopeId).validateResourceScope({ requestedResourceIds: [...scope!.resourceIds, x, y] }),
  );
  expect(err.code).toBe(Code.PermissionDenied);
  expect(err.findDetails(ScopeViolationSchema)[0].resourceIds).toEqual([x, y]);
});

test("a malformed scope_id never reaches the store", async () => {
  const err = await failure(client(ScopeService, "bob").getScope({ scopeId: "x".repeat(5000) }));
  expect(err.code).toBe(Code.NotFound);
  expect(scopes.gets).toBe(0);
});
