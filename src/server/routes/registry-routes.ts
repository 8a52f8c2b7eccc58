import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ErasureReportSchema,
  ProjectSchema,
  RegistryService,
  ResourceLinkSchema,
  ResourceSchema,
  type ErasureReport as WireErasureReport,
  type Project,
  type Resource,
  type ResourceLink,
} from "../../../gen/acms/v1/registry_pb.js";
import type { VisibleResource } from "../../application/registry/resource-registry.js";
import type { ErasureReport } from "../../application/registry/resource-eraser.js";
import type { LinkRecord, ProjectRecord } from "../../ports/registry-store.js";
import { principalOf } from "../access/handler-context.js";
import type { RouteDeps } from "../composition/server-deps.js";

function toProject(p: ProjectRecord): Project {
  return create(ProjectSchema, { name: p.name, namespace: p.name.split("/")[0], createdAt: timestampFromDate(p.createdAt) });
}

function toLink(l: LinkRecord): ResourceLink {
  return create(ResourceLinkSchema, { project: l.project, resourceId: l.resourceId, alias: l.alias });
}

function toResource(r: VisibleResource): Resource {
  return create(ResourceSchema, { ...r, links: r.links.map(toLink), createdAt: timestampFromDate(r.createdAt) });
}

function toErasureReport(r: ErasureReport): WireErasureReport {
  return create(ErasureReportSchema, {
    documents: BigInt(r.documents),
    chunks: BigInt(r.chunks),
    vectors: BigInt(r.vectors),
    triples: BigInt(r.triples),
    fragments: BigInt(r.fragments),
    links: BigInt(r.links),
    files: BigInt(r.files),
    indexGeneration: r.indexGeneration,
    resourceIds: r.resourceIds,
  });
}

/** RegistryService on the resource registry (application/registry). */
export function registryRoutes(deps: RouteDeps): (router: ConnectRouter) => void {
  const registry = deps.services.registry;
  return (router) => {
    router.service(RegistryService, {
      async createProject(req) {
        return { project: toProject(await registry.createProject(req.name)) };
      },
      async listProjects(req, ctx) {
        const page = await registry.listProjectsPage(principalOf(ctx), req);
        return { projects: page.items.map(toProject), nextPageToken: page.nextPageToken };
      },
      async registerResource(req, ctx) {
        return { resource: toResource(await registry.registerResource(principalOf(ctx), req)) };
      },
      async linkResource(req) {
        return { link: toLink(await registry.linkResource(req)) };
      },
      async listResources(req, ctx) {
        const page = await registry.listResourcesPage(principalOf(ctx), req.project, req);
        return { resources: page.items.map(toResource), nextPageToken: page.nextPageToken };
      },
      async resolveAlias(req) {
        return { resourceId: await registry.resolveAlias(req.project, req.aliasOrId) };
      },
      async validateAliases(req) {
        return { errors: await registry.validateAliases(req.project) };
      },
      async unlinkResource(req) {
        return { link: toLink(await registry.unlinkResource(req.project, req.resourceId)) };
      },
      async deleteResource(req, ctx) {
        return { report: toErasureReport(await deps.services.eraser.deleteResource(principalOf(ctx), req.resourceId)) };
      },
      async deleteProject(req, ctx) {
        return { report: toErasureReport(await deps.services.eraser.deleteProject(principalOf(ctx), req.name, req.cascade)) };
      },
    });
  };
}
