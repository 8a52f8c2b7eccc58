import micromatch from "micromatch";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { ScopeViolationSchema, type ScopeViolation } from "../../gen/acms/v1/errors_pb.js";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService, type UpsertDocumentsRequestSchema } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService, type ResourceScope } from "../../gen/acms/v1/scope_pb.js";
import { expectCode } from "../support/call-failure.js";
import { ensureProject } from "../support/ensure-project.js";
import type { TestServer } from "../support/test-server.js";

/** The embedding dimension of the isolation servers. */
export const DIM = 4;
export const ENV = { ACMS_EMBEDDING_DIM: String(DIM) };
/** The query embedding: every out-of-scope-prone chunk sits exactly on it, so it is always the nearest. */
export const Q = [1, 0, 0, 0];
/** An embedding on the query: cosine 1. */
const NEAREST = [1, 0, 0, 0];

export const RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label";
export const EX = "http://example.org/iso/";
/** A subject every resource's graph says something about, so its triples span every graph. */
export const COMMON = `${EX}Common`;
/** The word every document and every label holds. */
export const WORD = "zebra";

/** One document of the fixture as it currently stands (the live version). */
export interface FixtureDoc {
  resource: string;
  path: string;
  content: string;
  /** The one word only this document (version) holds. */
  marker: string;
  embedding: number[];
}

/** The multi-tenant fixture: ids by role, and every live document. */
export interface IsolationFixture {
  /** local/api, alias "core" (collides with web's and secret's alias). */
  apiRoot: string;
  /** local/api, alias "child", parent apiRoot. */
  apiChild: string;
  /** local/api, alias "grand", parent apiChild. */
  apiGrand: string;
  /** local/web, alias "core". */
  web: string;
  /** Owned by local/web ("shared"), linked into local/api as "common". */
  shared: string;
  /** other/secret (principal "other"), alias "core". */
  secret: string;
  /** other/secret (registered by admin), a DAG child of apiRoot: writer must never reach it. */
  leaf: string;
  /** Every live document. */
  docs: FixtureDoc[];
  /** Markers of superseded versions (history.md v1), never visible under `current`. */
  oldMarker: string;
  newMarker: string;
}

type UpsertInit = MessageInitShape<typeof UpsertDocumentsRequestSchema>;

async function* each<T>(list: readonly T[]): AsyncIterable<T> {
  for (const m of list) yield m;
}

/** Asserts PERMISSION_DENIED with a ScopeViolation detail, and returns the detail. */
export async function expectViolation(p: Promise<unknown>): Promise<ScopeViolation> {
  const err = await expectCode(p, Code.PermissionDenied);
  const [v] = err.findDetails(ScopeViolationSchema);
  expect(v).toBeDefined();
  return v;
}

/** Drains a server stream into an array. */
export async function drain<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const m of stream) out.push(m);
  return out;
}

/** The UKO URI of a document. */
export function docUri(resource: string, path: string): string {
  return `uko://${resource}/${path}`;
}

/** The named graph of a resource. */
export function graphOf(resource: string): string {
  return `uko://${resource}/`;
}

/** Whether a document path passes a scope's path filters, computed here independently of the server. */
export function pathPasses(scope: ResourceScope, path: string): boolean {
  const opts = { dot: true };
  if (scope.includePaths.length > 0 && !scope.includePaths.some((g) => micromatch.isMatch(path, g, opts))) return false;
  return !scope.excludePaths.some((g) => micromatch.isMatch(path, g, opts));
}

/** The live documents a scope may see. */
export function visibleDocs(f: IsolationFixture, scope: ResourceScope): FixtureDoc[] {
  const ids = new Set(scope.resourceIds);
  return f.docs.filter((d) => ids.has(d.resource) && pathPasses(scope, d.path));
}

/**
 * The invariant every answer must hold: each unit's resource is one of the scope's resources, its path
 * passes the scope's filters, and its URI is that resource and path (optionally a chunk).
 */
export function expectAllInScope(scope: ResourceScope, units: readonly { ukoUri: string; resourceId: string; path: string }[]): void {
  const ids = new Set(scope.resourceIds);
  for (const u of units) {
    expect({ uri: u.ukoUri, inScope: ids.has(u.resourceId) }).toEqual({ uri: u.ukoUri, inScope: true });
    expect({ uri: u.ukoUri, pathPasses: pathPasses(scope, u.path) }).toEqual({ uri: u.ukoUri, pathPasses: true });
    expect(u.ukoUri).toMatch(new RegExp(`^${escapeRe(docUri(u.resourceId, u.path))}(#[0-9]+)?$`));
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Resolves a scope as `principal` and returns it whole. */
export async function resolve(
  t: TestServer,
  principal: string,
  req: {
    projects: string[];
    includeResources?: string[];
    excludeResources?: string[];
    includePaths?: string[];
    excludePaths?: string[];
    temporalScope?: string;
  },
): Promise<ResourceScope> {
  const { scope } = await t.client(ScopeService, principal).resolveScope(req);
  return scope!;
}

async function register(t: TestServer, principal: string, proj: string, alias: string, parentIds: string[] = []): Promise<string> {
  const { resource } = await t.client(RegistryService, principal).registerResource({ project: proj, alias, kind: "repo", parentIds });
  return resource!.id;
}

const iri = (value: string) => ({ kind: TermKind.IRI, value });
const lit = (value: string) => ({ kind: TermKind.LITERAL, value });

/**
 * Builds the tenants: projects local/api, local/web, local/empty (writer), other/secret (other); a DAG
 * apiRoot → apiChild → apiGrand in local/api, plus leaf (other/secret) below apiRoot; a resource of
 * local/web linked into local/api; the alias "core" in three projects; documents holding the common word
 * and one marker each, with `secret/`-like paths; embeddings that put every chunk a narrowed scope must
 * not see exactly on the query vector; a superseded version; and triples with labels holding the query
 * word in every resource's named graph.
 */
export async function buildFixture(t: TestServer): Promise<IsolationFixture> {
  for (const p of ["local/api", "local/web", "local/empty"]) await ensureProject(t, "writer", p);
  await ensureProject(t, "other", "other/secret");
  const apiRoot = await register(t, "writer", "local/api", "core");
  const apiChild = await register(t, "writer", "local/api", "child", [apiRoot]);
  const apiGrand = await register(t, "writer", "local/api", "grand", [apiChild]);
  const web = await register(t, "writer", "local/web", "core");
  const shared = await register(t, "writer", "local/web", "shared");
  await t.client(RegistryService, "writer").linkResource({ project: "local/api", resourceId: shared, alias: "common" });
  const secret = await register(t, "other", "other/secret", "core");
  const leaf = await register(t, "admin", "other/secret", "leaf", [apiRoot]);

  const docs: FixtureDoc[] = [];
  const add = (resource: string, path: string, marker: string, embedding: number[]): FixtureDoc => {
    const d = { resource, path, content: `${WORD} ${marker} notes`, marker, embedding };
    docs.push(d);
    return d;
  };
  add(apiRoot, "readme.md", "mkreadme", [0.8, 0.6, 0, 0]);
  add(apiRoot, "src/app.ts", "mkapp", [0.6, 0.8, 0, 0]);
  add(apiRoot, "secret/keys.md", "mksecretkeys", NEAREST);
  add(apiRoot, "secret/deep/inner.md", "mkdeepsecret", NEAREST);
  add(apiRoot, "docs/secret/nested.md", "mknestedsecret", NEAREST);
  add(apiRoot, "Secret/upper.md", "mkuppersecret", NEAREST);
  add(apiRoot, "secret.md", "mksecretfile", NEAREST);
  add(apiRoot, ".env", "mkdotenv", NEAREST);
  add(apiRoot, "secret%2Fencoded.md", "mkencoded", NEAREST);
  add(apiChild, "child.md", "mkchild", NEAREST);
  add(apiGrand, "grand.md", "mkgrand", NEAREST);
  add(web, "web.md", "mkweb", NEAREST);
  add(web, "secret/web-keys.md", "mkwebkeys", NEAREST);
  add(shared, "shared.md", "mkshared", [0.7, 0, 0.7, 0]);
  add(secret, "readme.md", "mktenantsecret", NEAREST);
  add(leaf, "leaf.md", "mkleaf", NEAREST);

  const msg = (resource: string, list: readonly FixtureDoc[]): UpsertInit => ({
    resourceId: resource,
    documents: list.map((d) => ({
      path: d.path,
      content: d.content,
      metadata: { marker: d.marker },
      chunks: [{ text: d.content, embedding: d.embedding }],
    })),
  });
  const of = (r: string) => docs.filter((d) => d.resource === r);
  const index = (principal: string, list: UpsertInit[]) => t.client(IndexService, principal).upsertDocuments(each(list));
  await index(
    "writer",
    [apiRoot, apiChild, apiGrand, web, shared].map((r) => msg(r, of(r))),
  );
  await index("other", [msg(secret, of(secret))]);
  await index("admin", [msg(leaf, of(leaf))]);

  // history.md: the first version sits on the query vector and holds a marker; the second replaces it.
  const oldMarker = "mkoldversion";
  const newMarker = "mknewversion";
  const v1: FixtureDoc = {
    resource: apiRoot,
    path: "history.md",
    content: `${WORD} ${oldMarker} notes`,
    marker: oldMarker,
    embedding: NEAREST,
  };
  await index("writer", [msg(apiRoot, [v1])]);
  const v2 = add(apiRoot, "history.md", newMarker, [0.5, 0, 0, 0.5]);
  await index("writer", [msg(apiRoot, [v2])]);

  const aliasOf = new Map([
    [apiRoot, "apiroot"],
    [apiChild, "apichild"],
    [apiGrand, "apigrand"],
    [web, "web"],
    [shared, "shared"],
    [secret, "secret"],
    [leaf, "leaf"],
  ]);
  const writerOf = (r: string) => (r === secret ? "other" : r === leaf ? "admin" : "writer");
  for (const [r, name] of aliasOf) {
    await t.client(IndexService, writerOf(r)).putTriples({
      resourceId: r,
      replace: true,
      triples: [
        { subject: iri(`${EX}${name}`), predicate: iri(RDFS_LABEL), object: lit(`${WORD} gx${name} label`) },
        // The node points at every document of its resource (excluded paths too) and at other tenants' units,
        // so graph evidence always has out-of-scope units to (wrongly) offer.
        ...of(r).map((d) => ({
          subject: iri(`${EX}${name}`),
          predicate: iri(`${EX}describedBy`),
          object: iri(`${docUri(d.resource, d.path)}#0`),
        })),
        ...[apiRoot, web, secret, leaf]
          .filter((x) => x !== r)
          .map((x) => ({ subject: iri(`${EX}${name}`), predicate: iri(`${EX}mentions`), object: iri(docUri(x, of(x)[0].path)) })),
        { subject: iri(`${EX}${name}`), predicate: iri(`${EX}linksTo`), object: iri(COMMON) },
        { subject: iri(COMMON), predicate: iri(`${EX}mentionedIn`), object: lit(`gx${name}`) },
        { subject: iri(COMMON), predicate: iri(`${EX}next`), object: iri(`${EX}${name}`) },
      ],
    });
  }
  return { apiRoot, apiChild, apiGrand, web, shared, secret, leaf, docs, oldMarker, newMarker };
}

/** The name under which the fixture's graph of `resource` labels its node (`gx<name>`). */
export function graphMarker(f: IsolationFixture, resource: string): string {
  const names: Record<string, string> = {
    [f.apiRoot]: "apiroot",
    [f.apiChild]: "apichild",
    [f.apiGrand]: "apigrand",
    [f.web]: "web",
    [f.shared]: "shared",
    [f.secret]: "secret",
    [f.leaf]: "leaf",
  };
  return `gx${names[resource]}`;
}
