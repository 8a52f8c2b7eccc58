
import { RefKind } from "../../gen/acms/v1/options_pb.js";
import { InvalidArgumentError, NotFoundError, FailedPreconditionError, ScopeViolationError, UnauthenticatedError } from "../../src/domain/errors.js";
import type { ResourceScope } from "../../src/domain/scope.js";
import { createScopedBackendView } from "../../src/domain/scoped-backend-view.js";
import { authenticate, checkPrincipalRefs, checkScopedRefs, resolveView } from "../../src/server/access-check.js";
import { hashKey, KeyRing } from "../../src/server/key-ring.js";
import { createPrincipal } from "../../src/server/principal.js";
import type { RegistryStore, ResourceRecord } from "../../src/ports/registry-store.js";
import type { ScopeStore } from "../../src/ports/scope-store.js";
import type { RequestRef } from "../../src/server/request-refs.js";

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
      checkScopedRefs(view, [ref(RefKind.PROJECT, "local/api"), ref(RefKind.RESOURCE_ID, A), ref(RefKind.UKO_URI, `uko://${A}/docs/a.md#2`)]),
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
    [A]: { id: A, ownerProject: "local/api", kind: "repo", parentIds: [], metadata: {}, createdAt: new Date(0), links: [{ project: "local/api", resourceId: A, alias: "a" }] },
    [B]: { id: B, ownerProject: "other/x", kind: "repo", parentIds: [], metadata: {}, createdAt: new Date(0), links: [{ project: "other/x", resourceId: B, alias: "b" }] },
  };
  const registry = { getResource: (id: string) => resources[id] } as unknown as RegistryStore;
  const principal = createPrincipal("writer", ["local/*"], true);

  it("allows projects and resources of the key's globs", () => {
    expect(() => checkPrincipalRefs(principal, registry, [ref(RefKind.PROJECT, "local/new"), ref(RefKind.RESOURCE_ID, A)])).not.toThrow();
  });

  it("refuses other tenants' resources and unknown ids alike", () => {
    const err = violation(() => checkPrincipalRefs(principal, registry, [ref(RefKind.RESOURCE_ID, B), ref(RefKind.RESOURCE_ID, C), ref(RefKind.PROJECT, "other/x")]));
    expect(err.info.resourceIds).toEqual([B, C]);
    expect(err.info.projectNames).toEqual(["other/x"]);
    expect(err.info.scopeProjectNames).toEqual(["local/*"]);
  });
});

describe("authenticate and resolveView", () => {
  const keys = new KeyRing([{ name: "agent-a", key_sha256: hashKey("secret-a"), projects: ["local/*"], write: false }]);
  const stored = scope();
  const scopes: ScopeStore = { save: () => undefined, get: (id) => (id === stored.scopeId ? stored : undefined), close: () => undefined };

  it("needs a known bearer key", () => {
    expect(authenticate(keys, "Bearer secret-a").name).toBe("agent-a");
    expect(() => authenticate(keys, null)).toThrow(UnauthenticatedError);
    expect(() => authenticate(keys, "Basic secret-a")).toThrow(UnauthenticatedError);
    expect(() => authenticate(keys, "Bearer nope")).toThrow(UnauthenticatedError);
  });

  it("missing scope is FAILED_PRECONDITION; unknown or foreign scope is NOT_FOUND alike", () => {
    const a = createPrincipal("agent-a", ["local/*"], false);
    const b = createPrincipal("agent-b", ["local/*"], false);
    expect(resolveView(scopes, a, stored.scopeId).scopeId).toBe(stored.scopeId);
    expect(() => resolveView(scopes, a, null)).toThrow(FailedPreconditionError);
    expect(() => resolveView(scopes, a, " ")).toThrow(FailedPreconditionError);
    const foreign = (() => {
      try {
        resolveView(scopes, b, stored.scopeId);
      } catch (err) {
        return err as NotFoundError;
      }
    })();
    const unknown = (() => {
      try {
        resolveView(scopes, a, "01JNOPENOPENOPENOPENOPENOP");
      } catch (err) {
        return err as NotFoundError;
      }
    })();
    expect(foreign).toBeInstanceOf(NotFoundError);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(foreign?.message.replace(stored.scopeId, "X")).toBe(unknown?.message.replace("01JNOPENOPENOPENOPENOPENOP", "X"));
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
  const registry = { getResource: (id: string) => (id === A2 ? linked : undefined) } as unknown as RegistryStore;
  const writer = createPrincipal("writer", ["local/*"], true);

  it("reads reach a resource through any project it is linked into", () => {
    expect(() => checkPrincipalRefs(writer, registry, [ref(RefKind.RESOURCE_ID, A2)], false)).not.toThrow();
  });

  it("writes need the owner project: a link never grants write access", () => {
    expect(violation(() => checkPrincipalRefs(writer, registry, [ref(RefKind.RESOURCE_ID, A2)], true)).info.resourceIds).toEqual([A2]);
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
