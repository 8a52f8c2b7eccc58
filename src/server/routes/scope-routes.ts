import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { ResourceScopeSchema, ScopeService, type ResourceScope as ResourceScopeMessage } from "../../../gen/acms/v1/scope_pb.js";
import type { ResourceScope } from "../../domain/scope.js";
import { principalOf, viewOf } from "../access/handler-context.js";
import type { RouteDeps } from "../composition/server-deps.js";

/** The wire form of a stored scope. */
export function toScopeMessage(s: ResourceScope): ResourceScopeMessage {
  return create(ResourceScopeSchema, {
    scopeId: s.scopeId,
    resourceIds: [...s.resourceIds],
    projectNames: [...s.projectNames],
    temporalScope: s.temporalScope,
    includeResources: [...s.includeResources],
    excludeResources: [...s.excludeResources],
    includePaths: [...s.includePaths],
    excludePaths: [...s.excludePaths],
    parentScopeId: s.parentScopeId,
    expandDescendants: s.expandDescendants,
    deniedResourceIds: [...s.deniedResourceIds],
    createdAt: timestampFromDate(s.createdAt),
  });
}

/**
 * ScopeService on the scope resolver (application/scopes). The access interceptor turns the `acms-scope`
 * header into a view for NarrowScope and the validation RPCs, and checks their project and resource fields
 * against it (so the validation RPCs only have to answer empty).
 */
export function scopeRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const scopes = deps.services.scopes;
  return (router) => {
    router.service(ScopeService, {
      async resolveScope(req, ctx) {
        return { scope: toScopeMessage(await scopes.resolve(principalOf(ctx), req)) };
      },
      async getScope(req, ctx) {
        return { scope: toScopeMessage(await scopes.get(principalOf(ctx), req.scopeId)) };
      },
      async narrowScope(req, ctx) {
        return { scope: toScopeMessage(await scopes.narrow(principalOf(ctx), viewOf(ctx).scope, req)) };
      },
      validateProjectScope() {
        return {};
      },
      validateResourceScope() {
        return {};
      },
      async listScopes(req, ctx) {
        const page = await scopes.list(principalOf(ctx), req);
        return { scopes: page.scopes.map(toScopeMessage), nextPageToken: page.nextPageToken };
      },
    });
  };
}
