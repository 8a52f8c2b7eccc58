import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { access, Access, RefKind } from "../../../gen/acms/v1/options_pb.js";
import {
  FailedPreconditionError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  UnauthenticatedError,
  type FieldViolation,
} from "../../domain/errors.js";
import { projectNameProblem } from "../../domain/project-name.js";
import type { ResourceScope } from "../../domain/scope.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { isUlid, resourceIdProblem } from "../../domain/ulid-id.js";
import { parseUkoUri } from "../../domain/uko-uri.js";
import { validateDocumentPath } from "../../domain/document-path.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import type { KeyRing } from "../../application/access/key-ring.js";
import { mayRead, mayWrite, type Principal } from "../../domain/principal.js";
import type { RequestRef } from "./request-refs.js";
import type { ScopeViewCache } from "./scope-view-cache.js";
import { scopeViolation } from "../../domain/scope-violation.js";

// Plain functions the interceptor calls: transport-free, so a second transport can reuse them.

/** The principal of an `authorization: Bearer <key>` header value. */
export function authenticate(keys: KeyRing, authorization: string | null): Principal {
  if (!authorization) throw new UnauthenticatedError("missing authorization header: send 'authorization: Bearer <api-key>'");
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) throw new UnauthenticatedError("malformed authorization header: expected 'Bearer <api-key>'");
  const principal = keys.authenticate(m[1]);
  if (!principal) throw new UnauthenticatedError("unknown API key");
  return principal;
}

/** The check a method gets: its `(acms.v1.access)` rule, or only a key for a service listed as such. */
export type AccessRule = Access.SCOPED | Access.READ | Access.WRITE | "authenticated";

/**
 * The access rule of `method`, fail closed: a method without an explicit `(acms.v1.access)` option (or
 * with ACCESS_UNSPECIFIED) is refused with PERMISSION_DENIED, never served on authentication alone, so a
 * new RPC that forgot its option cannot leak. Only the services in `authenticatedOnly` (reflection, whose
 * vendored protos carry no option of ours) are answered on a valid key alone.
 */
export function accessRuleOf(method: DescMethod, authenticatedOnly: ReadonlySet<string>): AccessRule {
  if (authenticatedOnly.has(method.parent.typeName)) return "authenticated";
  const mode = getOption(method, access);
  if (mode === Access.SCOPED || mode === Access.READ || mode === Access.WRITE) return mode;
  throw new PermissionDeniedError(`${method.parent.typeName}/${method.name} declares no access rule: refused`);
}

/**
 * Write methods that act on a project's link to a resource, not on the resource: the project they name is
 * checked as every write's (the key must allow it and allow writes), but their resource ids only for reach
 * (readable through a project the key allows), not ownership. A tenant that linked another's resource into
 * its own project stops using it by unlinking it, which must not need the owner's rights; the owner's
 * project itself is never unlinked (the handler refuses that link), so no owner right is exercised.
 */
export const LINK_WRITE_METHODS: ReadonlySet<string> = new Set(["acms.v1.RegistryService.UnlinkResource"]);

/** Refuses a write by a read-only key. */
export function requireWrite(principal: Principal): void {
  if (!principal.write) throw new PermissionDeniedError(`Key "${principal.name}" may not write`);
}

/** The longest acms-scope header value looked up. */
const MAX_SCOPE_ID = 64;

/** The same answer for an unknown scope and another principal's, so existence is never revealed. */
function scopeNotFound(scopeId: string): NotFoundError {
  return new NotFoundError(`scope ${scopeId.slice(0, MAX_SCOPE_ID)} not found`);
}

/** Refuses a scope `principal` may not use: made by another principal, or naming projects the key lost. */
function admit(scope: ResourceScope | undefined, principal: Principal, scopeId: string): ResourceScope {
  if (!scope || scope.owner !== principal.name) throw scopeNotFound(scopeId);
  // Keys can lose projects between restarts: a scope made before must not outlive the key's rights.
  const revoked = scope.projectNames.filter((p) => !principal.allowsProject(p));
  if (revoked.length > 0) {
    throw scopeViolation({
      available: scope.projectNames,
      projects: revoked,
      reason: `Projects no longer allowed for key "${principal.name}": ${revoked.join(", ")}`,
    });
  }
  return scope;
}

/**
 * The view of the scope named by the `acms-scope` header. Missing: FAILED_PRECONDITION. Unknown or made
 * by another principal: NOT_FOUND, with the same message either way so existence is never revealed.
 * A cached scope is answered synchronously (no await on the hot path); otherwise the answer is a promise
 * of the view read from the store. Errors known without a store read are thrown synchronously.
 */
export function resolveView(
  views: ScopeViewCache,
  principal: Principal,
  scopeHeader: string | null,
): ScopedBackendView | Promise<ScopedBackendView> {
  const scopeId = scopeHeader?.trim() ?? "";
  if (scopeId.length === 0) {
    throw new FailedPreconditionError("missing acms-scope header: resolve a scope with ScopeService.ResolveScope and send its scope_id");
  }
  if (scopeId.length > MAX_SCOPE_ID) throw scopeNotFound(scopeId);
  const cached = views.peek(scopeId);
  if (cached) {
    admit(cached.scope, principal, scopeId);
    return cached;
  }
  return views.read(scopeId).then((scope) => views.viewOf(admit(scope, principal, scopeId)));
}

interface Offenders {
  violations: FieldViolation[];
  projects: string[];
  resources: string[];
  paths: string[];
}

function classify(
  refs: readonly RequestRef[],
  resourceVisible: (id: string) => boolean,
  projectVisible: (p: string) => boolean,
  pathVisible: (id: string, path: string) => boolean,
): Offenders {
  const o: Offenders = { violations: [], projects: [], resources: [], paths: [] };
  // A Set per list keeps this linear in the number of refs (a list `includes` was quadratic).
  const seen = new Map<string[], Set<string>>();
  const addUnique = (list: string[], v: string) => {
    let s = seen.get(list);
    if (!s) seen.set(list, (s = new Set()));
    if (s.has(v)) return;
    s.add(v);
    list.push(v);
  };
  for (const r of refs) {
    switch (r.kind) {
      case RefKind.PROJECT: {
        const problem = projectNameProblem(r.value);
        if (problem) {
          o.violations.push({ field: r.field, description: problem });
        } else if (!projectVisible(r.value)) addUnique(o.projects, r.value);
        break;
      }
      case RefKind.RESOURCE_ID: {
        const problem = resourceIdProblem(r.value);
        if (problem) o.violations.push({ field: r.field, description: problem });
        else if (!resourceVisible(r.value)) addUnique(o.resources, r.value);
        break;
      }
      case RefKind.UKO_URI: {
        let uri;
        try {
          uri = parseUkoUri(r.value, r.field);
        } catch (err) {
          o.violations.push(...(err as InvalidArgumentError).violations);
          break;
        }
        if (!resourceVisible(uri.resourceId)) addUnique(o.resources, uri.resourceId);
        else if (!pathVisible(uri.resourceId, uri.path)) addUnique(o.paths, r.value);
        break;
      }
      case RefKind.IRI: {
        // Any IRI may be asked about; a uko:// IRI names a resource (and maybe a path) and is checked as one.
        const named = ukoIriTarget(r.value);
        if (!named) break;
        if (!resourceVisible(named.resourceId)) addUnique(o.resources, named.resourceId);
        else if (named.path !== undefined && !pathVisible(named.resourceId, named.path)) addUnique(o.paths, r.value);
        break;
      }
      default:
        break;
    }
  }
  return o;
}

/** The resource (and document path, when there is one) a `uko://` IRI names; undefined for other IRIs. */
function ukoIriTarget(iri: string): { resourceId: string; path?: string } | undefined {
  if (!iri.startsWith("uko://")) return undefined;
  const rest = iri.slice("uko://".length);
  const end = rest.search(/[/#?]/);
  const resourceId = end < 0 ? rest : rest.slice(0, end);
  if (!isUlid(resourceId)) return undefined;
  if (end < 0 || rest[end] !== "/") return { resourceId };
  const path = rest.slice(end + 1).replace(/#.*$/, "");
  return path.length > 0 && validateDocumentPath(path) === undefined ? { resourceId, path } : { resourceId };
}

function raise(o: Offenders, available: readonly string[], of: string): void {
  if (o.violations.length > 0) throw new InvalidArgumentError(o.violations);
  if (o.projects.length + o.resources.length + o.paths.length === 0) return;
  throw scopeViolation({ available, projects: o.projects, resources: o.resources, paths: o.paths, of });
}

/**
 * Rejects, naming every offender at once, any project, resource or UKO URI of `refs` outside the view.
 * Malformed values are INVALID_ARGUMENT (checked first, all at once).
 */
export function checkScopedRefs(view: ScopedBackendView, refs: readonly RequestRef[]): void {
  if (refs.length === 0) return;
  const o = classify(
    refs,
    (id) => view.resourceSet.has(id),
    (p) => view.projectSet.has(p),
    (id, path) => view.allows(id, path),
  );
  raise(o, view.projectNames, "scope");
}

/** Whether each of `ids` is reachable, asked of all of them together: a look-up by id. */
async function lookUp(ids: ReadonlySet<string>, reach: (id: string) => Promise<boolean>): Promise<(id: string) => boolean> {
  const answers = new Map(await Promise.all([...ids].map(async (id) => [id, await reach(id)] as const)));
  return (id) => answers.get(id) === true;
}

/**
 * Rejects any project the principal's key does not allow, and any resource it may not touch (a resource
 * that does not exist is refused the same way, so ids of other tenants reveal nothing). Reads may reach a
 * resource through any project it is linked into; writes (`write`) need the resource's owner project, so
 * linking another tenant's resource into a project never hands out write access to it. The resources
 * named are read from the registry together (one look-up each, concurrently) before the refs are judged.
 */
export async function checkPrincipalRefs(
  principal: Principal,
  registry: RegistryStore,
  refs: readonly RequestRef[],
  write = false,
): Promise<void> {
  if (refs.length === 0) return;
  // A first pass only collects the resource ids the refs name (same parsing as the judging pass);
  // malformed values are refused before any registry read.
  const named = new Set<string>();
  const malformed = classify(
    refs,
    (id) => (named.add(id), true),
    () => true,
    () => true,
  ).violations;
  if (malformed.length > 0) throw new InvalidArgumentError(malformed);
  // A write needs only the owner project (one read of the resource's row); a read, the resource's links.
  const reachable = write
    ? await lookUp(named, async (id) => {
        return mayWrite(principal, await registry.resourceState(id));
      })
    : await lookUp(named, async (id) => mayRead(principal, await registry.getResource(id)));
  const o = classify(
    refs,
    reachable,
    (p) => principal.allowsProject(p),
    () => true,
  );
  raise(o, principal.projects, `key "${principal.name}"`);
}
