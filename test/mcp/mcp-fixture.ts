import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { ContextTierService, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { ensureProject } from "../support/ensure-project.js";
import type { TestServer } from "../support/test-server.js";

export const EX = "http://example.org/mcp/";
export const LABEL = "http://www.w3.org/2000/01/rdf-schema#label";

/** Two tenants: "writer" owns local/api (resources docs and code), "other" owns other/secret. */
export interface McpFixture {
  /** local/api, alias "docs": guide/intro.md, guide/setup.md. */
  docs: string;
  /** local/api, alias "code": src/main.ts. */
  code: string;
  /** other/secret (principal "other"), alias "vault": vault.md. */
  secret: string;
  /** writer's scope over local/api. */
  scope: string;
  /** other's scope over other/secret. */
  otherScope: string;
  /** A fragment "other" remembered in other/secret. */
  otherFragment: string;
}

const iri = (value: string) => ({ kind: TermKind.IRI, value });
const lit = (value: string) => ({ kind: TermKind.LITERAL, value });

async function* one<T>(m: T): AsyncIterable<T> {
  yield m;
}

/** Seeds both tenants: documents (every one holds the word "zebra"), a graph per resource, scopes, a fragment. */
export async function seedMcpFixture(t: TestServer): Promise<McpFixture> {
  await ensureProject(t, "writer", "local/api");
  await ensureProject(t, "other", "other/secret");
  const reg = (p: string) => t.client(RegistryService, p);
  const docs = (await reg("writer").registerResource({ project: "local/api", alias: "docs", kind: "docs" })).resource!.id;
  const code = (await reg("writer").registerResource({ project: "local/api", alias: "code", kind: "repo" })).resource!.id;
  const secret = (await reg("other").registerResource({ project: "other/secret", alias: "vault", kind: "docs" })).resource!.id;
  const upsert = (p: string, resourceId: string, documents: { path: string; content: string }[]) =>
    t.client(IndexService, p).upsertDocuments(one({ resourceId, documents }));
  await upsert("writer", docs, [
    { path: "guide/intro.md", content: "zebra introduction: the api serves striped answers" },
    { path: "guide/setup.md", content: "zebra setup: install and configure the service" },
  ]);
  await upsert("writer", code, [{ path: "src/main.ts", content: "export const zebra = 'main entry point';" }]);
  await upsert("other", secret, [{ path: "vault.md", content: "zebra vault: the other tenant's secret launch codes" }]);
  const triples = (p: string, resourceId: string, name: string) =>
    t.client(IndexService, p).putTriples({
      resourceId,
      replace: true,
      triples: [
        { subject: iri(`${EX}${name}`), predicate: iri(LABEL), object: lit(`zebra ${name} label`) },
        { subject: iri(`${EX}${name}`), predicate: iri(`${EX}next`), object: iri(`${EX}${name}-next`) },
        { subject: iri(`${EX}${name}-next`), predicate: iri(LABEL), object: lit(`${name} next`) },
      ],
    });
  await triples("writer", docs, "docs");
  await triples("other", secret, "secret");
  const scope = (await t.client(ScopeService, "writer").resolveScope({ projects: ["local/api"] })).scope!.scopeId;
  const otherScope = (await t.client(ScopeService, "other").resolveScope({ projects: ["other/secret"] })).scope!.scopeId;
  const otherFragment = (
    await t
      .client(ContextTierService, "other", otherScope)
      .storeFragment({ fragment: { content: "other's private decision", tier: Tier.HOT, projectName: "other/secret" } })
  ).fragment!.fragmentId;
  return { docs, code, secret, scope, otherScope, otherFragment };
}
