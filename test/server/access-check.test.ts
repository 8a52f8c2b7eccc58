import { RefKind } from "../../gen/acms/v1/options_pb.js";
import {
  InvalidArgumentError,
  NotFoundError,
  FailedPreconditionError,
  ScopeViolationError,
  UnauthenticatedError,
} from "../../src/domain/errors.js";
import type { ResourceScope } from "../../src/domain/scope.js";
import { createScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { authenticate, checkPrincipalRefs, checkScopedRefs, resolveView } from "../../src/server/access/access-check.js";
import { hashKey, KeyRing } from "../../src/application/access/key-ring.js";
import { createPrincipal } from "../../src/domain/principal.js";
import type { RegistryStore, ResourceRecord } from "../../src/ports/registry-store.js";
import type { ScopeStore } from "../../src/ports/scope-store.js";
import type { RequestRef } from "../../src/server/access/request-refs.js";
import { ScopeViewCache } from "../../src/server/access/scope-view-cache.js";

const A = "01JAAAAAAAAAAAAAAAAAAAAAAA";
const B = "01JBBBBBBBBBBBBBBBBBBBBBBB";
const C = "01JCCCCCCCCCCCCCCCCCCCCCCC";

function scope(over: Partial<ResourceScope> = {}): ResourceScope {
  return {
    scopeId: "01JSCOPESCOPESCOPESCOPESCO",
    owner: "agent-a",
    resourceIds: [A],
    projectNames: ["local/api"],
    temporalScope: "current",
    includeResources: [],
    excludeResources: [],
    includePaths: [],
    excludePaths: ["secret/**"],
    parentScopeId: "",
    expandDescendants: true,
    deniedResourceIds: [],
    createdAt: new Date(0),
    ...over,
  };
}

/** The ScopeViolation `fn` throws or rejects with (checks are synchronous or asynchronous). */
async function violationOf(fn: () => unknown): Promise<ScopeViolationError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ScopeViolationError) return err;
    throw err;
  }
  throw new Error("expected a ScopeViolation");
}

function violation(fn: () => void): ScopeViolationError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ScopeViolationError) return err;
    throw err;
  }
  throw new Error("expected a ScopeViolation");
}

const ref = (kind: RefKind, value: string, field = "f"): RequestRef => ({ kind, field, value });

describe("checkScopedRefs", () => {
  const view = createScopedBackendView(scope());

  it("passes in-scope references", () => {
    expect(() =>
      checkScopedRefs(view, [
        ref(RefKind.PROJECT, "local/api"),
        ref(RefKind.RESOURCE_ID, A),
        ref(RefKind.UKO_URI, `uko://${A}/docs/a.md#2`),
      ]),
    ).not.toThrow();
  });

  it("names every offender at once, with the scope's projects", () => {
    const err = violation(() =>
      checkScopedRefs(view, [
        ref(RefKind.PROJECT, "local/frontend"),
        ref(RefKind.RESOURCE_ID, B),
        ref(RefKind.UKO_URI, `uko://${C}/x.md`),
        ref(RefKind.RESOURCE_ID, B),
      ]),
    );
    expect(err.info.projectNames).toEqual(["local/frontend"]);
    expect(err.info.resourceIds).toEqual([B, C]);
    expect(err.info.scopeProjectNames).toEqual(["local/api"]);
    expect(err.message).toContain("Projects not in scope: local/frontend. Available: local/api");
  });

  it("refuses a URI whose path the scope excludes", () => {
    const err = violation(() => checkScopedRefs(view, [ref(RefKind.UKO_URI, `uko://${A}/secret/keys.md`)]));
    expect(err.message).toContain("secret/keys.md");
  });

  it("answers INVALID_ARGUMENT for malformed values before any scope check", () => {
    expect(() => checkScopedRefs(view, [ref(RefKind.RESOURCE_ID, "not-an-id", "ids[0]"), ref(RefKind.PROJECT, "local/frontend")])).toThrow(
      InvalidArgumentError,
    );
    expect(() => checkScopedRefs(view, [ref(RefKind.UKO_URI, `uko://${A}/../b`, "uko_uris[0]")])).toThrow(InvalidArgumentError);
  });

  it("refuses a scope whose every resource was denied", () => {
    expect(() => createScopedBackendView(scope({ resourceIds: [], deniedResourceIds: [A] }))).toThrow(ScopeViolationError);
    expect(createScopedBackendView(scope({ resourceIds: [], deniedResourceIds: [] })).resourceIds).toEqual([]);
  });
});

describe("checkPrincipalRefs", () => {
  const resources: Record<string, ResourceRecord> = {
    [A]: {
      id: A,
      ownerProject: "local/api",
      kind: "repo",
      parentIds: [],
      metadata: {},
      createdAt: new Date(0),
      links: [{ project: "local/api", resourceId: A, alias: "a" }],
    },
    [B]: {
      id: B,
      ownerProject: "other/x",
      kind: "repo",
      parentIds: [],
      metadata: {},
      createdAt: new Date(0),
      links: [{ project: "other/x", resourceId: B, alias: "b" }],
    },
  };
  const registry = {
    getResource: async (id: string) => resources[id],
    resourceState: async (id: string) => resources[id] && { ownerProject: resources[id].ownerProject, erasing: false },
  } as unknown as RegistryStore;
  const principal = createPrincipal("writer", ["local/*"], true);

  it("allows projects and resources of the key's globs", async () => {
    await expect(
      checkPrincipalRefs(principal, registry, [ref(RefKind.PROJECT, "local/new"), ref(RefKind.RESOURCE_ID, A)]),
    ).resolves.not.toThrow();
  });

  it("refuses other tenants' resources and unknown ids alike", async () => {
    const err = await violationOf(() =>
      checkPrincipalRefs(principal, registry, [ref(RefKind.RESOURCE_ID, B), ref(RefKind.RESOURCE_ID, C), ref(RefKind.PROJECT, "other/x")]),
    );
    expect(err.info.resourceIds).toEqual([B, C]);
    expect(err.info.projectNames).toEqual(["other/x"]);
    expect(err.info.scopeProjectNames).toEqual(["local/*"]);
  });
});

describe("authenticate and resolveView", () => {
  const keys = new KeyRing([{ name: "agent-a", key_sha256: hashKey("secret-a"), projects: ["local/*"], write: false }]);
  const stored = scope();
  const scopes: ScopeStore = {
    save: async () => true,
    get: async (id) => (id === stored.scopeId ? stored : undefined),
    listByOwner: async () => ({ scopes: [] }),
    usageOf: async () => ({ scopes: 0, bytes: 0 }),
    close: async () => undefined,
  };

  it("needs a known bearer key", () => {
    expect(authenticate(keys, "Bearer secret-a").name).toBe("agent-a");
    expect(() => authenticate(keys, null)).toThrow(UnauthenticatedError);
    expect(() => authenticate(keys, "Basic secret-a")).toThrow(UnauthenticatedError);
    expect(() => authenticate(keys, "Bearer nope")).toThrow(UnauthenticatedError);
  });

  it("missing scope is FAILED_PRECONDITION; unknown or foreign scope is NOT_FOUND alike", async () => {
    const a = createPrincipal("agent-a", ["local/*"], false);
    const b = createPrincipal("agent-b", ["local/*"], false);
    const views = new ScopeViewCache(scopes);
    expect((await resolveView(views, a, stored.scopeId)).scopeId).toBe(stored.scopeId);
    expect(() => resolveView(views, a, null)).toThrow(FailedPreconditionError);
    expect(() => resolveView(views, a, " ")).toThrow(FailedPreconditionError);
    const foreign = await (async () => {
      try {
        await resolveView(views, b, stored.scopeId);
      } catch (err) {
        return err as NotFoundError;
      }
    })();
    const unknown = await (async () => {
      try {
        await resolveView(views, a, "01JNOPENOPENOPENOPENOPENOP");
      } catch (err) {
        return err as NotFoundError;
      }
    })();
    expect(foreign).toBeInstanceOf(NotFoundError);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(foreign?.message.replace(stored.scopeId, "X")).toBe(unknown?.message.replace("01JNOPENOPENOPENOPENOPENOP", "X"));
  });
});

describe("ScopeViewCache", () => {
  it("answers a cached scope synchronously, without a store read, and still checks the owner every call", async () => {
    const stored = scope();
    let reads = 0;
    const scopes: ScopeStore = {
      save: async () => true,
      get: async (id) => {
        reads += 1;
        return id === stored.scopeId ? stored : undefined;
      },
      listByOwner: async () => ({ scopes: [] }),
      usageOf: async () => ({ scopes: 0, bytes: 0 }),
      close: async () => undefined,
    };
    const views = new ScopeViewCache(scopes);
    const a = createPrincipal("agent-a", ["local/*"], false);
    const first = await resolveView(views, a, stored.scopeId);
    const again = resolveView(views, a, stored.scopeId);
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toBe(first);
    expect(reads).toBe(1);
    expect(() => resolveView(views, createPrincipal("agent-b", ["local/*"], false), stored.scopeId)).toThrow(NotFoundError);
    await expect(resolveView(views, a, "01JNOPENOPENOPENOPENOPENOP")).rejects.toThrow(NotFoundError);
    expect(views.peek("01JNOPENOPENOPENOPENOPENOP")).toBeUndefined();
  });

  it("keeps at most `size` views, least recently used out first", async () => {
    const [s1, s2] = [scope({ scopeId: "01JSCOPESCOPESCOPESCOPES01" }), scope({ scopeId: "01JSCOPESCOPESCOPESCOPES02" })];
    const scopes: ScopeStore = {
      save: async () => true,
      get: async (id) => [s1, s2].find((s) => s.scopeId === id),
      listByOwner: async () => ({ scopes: [] }),
      usageOf: async () => ({ scopes: 0, bytes: 0 }),
      close: async () => undefined,
    };
    const views = new ScopeViewCache(scopes, { size: 1 });
    const a = createPrincipal("agent-a", ["local/*"], false);
    await resolveView(views, a, s1.scopeId);
    await resolveView(views, a, s2.scopeId);
    expect(views.peek(s1.scopeId)).toBeUndefined();
    expect(views.peek(s2.scopeId)?.scopeId).toBe(s2.scopeId);
  });
});

describe("checkPrincipalRefs for writes", () => {
  const A2 = "01JAAAAAAAAAAAAAAAAAAAAAA2";
  const linked: ResourceRecord = {
    id: A2,
    ownerProject: "other/x",
    kind: "repo",
    parentIds: [],
    metadata: {},
    createdAt: new Date(0),
    links: [
      { project: "other/x", resourceId: A2, alias: "x" },
      { project: "local/web", resourceId: A2, alias: "borrowed" },
    ],
  };
  const registry = {
    getResource: async (id: string) => (id === A2 ? linked : undefined),
    resourceState: async (id: string) => (id === A2 ? { ownerProject: linked.ownerProject, erasing: false } : undefined),
  } as unknown as RegistryStore;
  const writer = createPrincipal("writer", ["local/*"], true);

  it("reads reach a resource through any project it is linked into", async () => {
    await expect(checkPrincipalRefs(writer, registry, [ref(RefKind.RESOURCE_ID, A2)], false)).resolves.not.toThrow();
  });

  it("writes need the owner project: a link never grants write access", async () => {
    expect((await violationOf(() => checkPrincipalRefs(writer, registry, [ref(RefKind.RESOURCE_ID, A2)], true))).info.resourceIds).toEqual([
      A2,
    ]);
  });
});

describe("IRI references", () => {
  const view = createScopedBackendView(scope());

  it("let any IRI through but a uko:// IRI of an out-of-scope resource or excluded path", () => {
    expect(() =>
      checkScopedRefs(view, [
        ref(RefKind.IRI, "http://example.org/a"),
        ref(RefKind.IRI, "_:b0"),
        ref(RefKind.IRI, `uko://${A}/`),
        ref(RefKind.IRI, `uko://${A}/docs/a.md#3`),
        ref(RefKind.IRI, "uko://not-a-resource/x"),
      ]),
    ).not.toThrow();
    expect(violation(() => checkScopedRefs(view, [ref(RefKind.IRI, `uko://${B}/`)])).info.resourceIds).toEqual([B]);
    expect(violation(() => checkScopedRefs(view, [ref(RefKind.IRI, `uko://${C}/x.md#0`)])).info.resourceIds).toEqual([C]);
    expect(violation(() => checkScopedRefs(view, [ref(RefKind.IRI, `uko://${A}/secret/k.md`)])).message).toContain("secret/k.md");
  });
});
