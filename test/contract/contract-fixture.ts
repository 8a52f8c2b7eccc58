import { mkdtempSync, rmSync } from "node:fs";
import { quietLog } from "../support/quiet-log.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { ScopeViolationSchema, type ScopeViolation } from "../../gen/acms/v1/errors_pb.js";
import { TermKind } from "../../gen/acms/v1/graph_pb.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import type { Backends } from "../../src/server/composition/backends.js";
import { createBackends } from "../../src/server/composition/composition-root.js";
import { loadConfig } from "../../src/server/composition/config.js";
import { generateKey, hashKey, KeyRing } from "../../src/application/access/key-ring.js";
import { startServer, type AcmsServer } from "../../src/server/composition/server.js";
import { doc, upsert } from "../index/index-fixture.js";
import { authInterceptor, DEFAULT_PRINCIPALS, startTestServer, type TestServer } from "../support/test-server.js";
import { engineEnv } from "../support/test-engine.js";

/** The embedding dimension of every contract server. */
export const DIM = 4;
/** The environment of every contract server. */
export const CONTRACT_ENV = { ACMS_EMBEDDING_DIM: String(DIM) };
/** Both wire protocols an outside client may use. */
export const PROTOCOLS = ["connect", "grpc"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export const EX = "http://example.org/";
export const RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label";

/** Starts a contract server (real server, fresh data, dimension 4). */
export function startContractServer(env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer({ env: { ...CONTRACT_ENV, ...env } });
}

/** The error of a call that must fail. */
export async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail, it succeeded");
}

/** A message that leaks internals: a stack frame or a source file path. */
const LEAK = /(^|\n)\s+at\s|[/\\][\w.-]+\.(ts|js|cjs|mjs)\b|node_modules|\/work\//;

/** Asserts `err` carries `code` exactly and no stack trace or file path. */
export function assertCode(err: ConnectError, code: Code): ConnectError {
  expect(`${Code[err.code]}: ${err.rawMessage}`).toMatch(new RegExp(`^${Code[code]}: `));
  expect(err.rawMessage).not.toMatch(LEAK);
  return err;
}

/** Awaits a failing call and asserts its code. */
export async function expectCode(p: Promise<unknown>, code: Code): Promise<ConnectError> {
  return assertCode(await failure(p), code);
}

/** Whether a BadRequest field path names `field` (itself, an element `field[i]`, or a member `field.x`). */
export function namesField(path: string, field: string): boolean {
  return path === field || path.startsWith(`${field}[`) || path.startsWith(`${field}.`);
}

/** Asserts an INVALID_ARGUMENT with a BadRequest field violation naming `field`; returns the violations' fields. */
export async function expectBadField(p: Promise<unknown>, field: string): Promise<string[]> {
  const err = await expectCode(p, Code.InvalidArgument);
  const [detail] = err.findDetails(BadRequestSchema);
  expect(detail).toBeDefined();
  const fields = detail.fieldViolations.map((v) => v.field);
  expect(fields.some((f) => namesField(f, field)) ? field : fields).toBe(field);
  return fields;
}

/** Asserts a PERMISSION_DENIED with a ScopeViolation detail, and returns it. */
export async function expectViolation(p: Promise<unknown>): Promise<{ err: ConnectError; violation: ScopeViolation }> {
  const err = await expectCode(p, Code.PermissionDenied);
  const [violation] = err.findDetails(ScopeViolationSchema);
  expect(violation).toBeDefined();
  return { err, violation };
}

/** Drains a server stream. */
export async function drain<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const m of stream) out.push(m);
  return out;
}

async function* one<T>(m: T): AsyncIterable<T> {
  yield m;
}

/** Calls any method of a generated client with one request message, whatever its kind. */
export async function callMethod(client: Client<DescService>, method: DescMethod, init: object = {}): Promise<unknown> {
  const fn = (client as unknown as Record<string, (...args: unknown[]) => unknown>)[method.localName];
  switch (method.methodKind) {
    case "unary":
      return await (fn(init) as Promise<unknown>);
    case "server_streaming":
      return drain(fn(init) as AsyncIterable<unknown>);
    case "client_streaming":
      return await (fn(one(init)) as Promise<unknown>);
    default:
      return drain(fn(one(init)) as AsyncIterable<unknown>);
  }
}

const iri = (value: string) => ({ kind: TermKind.IRI, value });
const lit = (value: string) => ({ kind: TermKind.LITERAL, value });

/** The data every contract suite runs against. */
export interface ContractWorld {
  /** local/api: core (parent of lib), lib, guide; local/frontend: web; other/x: foreign (principal "other"). */
  core: string;
  lib: string;
  guide: string;
  web: string;
  foreign: string;
  /** writer's scopes: local/api; local/api + local/frontend; local/api without secret/**. */
  apiScope: string;
  bothScope: string;
  noSecretScope: string;
  /** other's scope over other/x. */
  otherScope: string;
  /** How many guide pages match "common" (more than the default max_results). */
  guidePages: number;
  /** local/bulk: one resource of `guidePages` documents, each a "bulk" chunk with embedding [0,0,0,1]. */
  bulk: string;
  /** writer's scope over local/bulk. */
  bulkScope: string;
}

async function resource(t: TestServer, principal: string, project: string, alias: string, parentIds: string[] = []): Promise<string> {
  const reg = t.client(RegistryService, principal);
  const { resource: r } = await reg.registerResource({ project, alias, kind: "repo", parentIds });
  return r!.id;
}

async function scope(t: TestServer, principal: string, projects: string[], excludePaths: string[] = []): Promise<string> {
  const { scope: s } = await t.client(ScopeService, principal).resolveScope({ projects, excludePaths });
  return s!.scopeId;
}

/**
 * Seeds two tenants: writer's local/api (core → lib, guide) and local/frontend (web), and other's other/x
 * (foreign). Vector documents are built so cosines are known: [1,0,0,0] is "east", twins tie exactly,
 * `src/opposite.md` points west (negative cosine to east).
 */
export async function seedWorld(t: TestServer): Promise<ContractWorld> {
  const writerReg = t.client(RegistryService, "writer");
  for (const name of ["local/api", "local/frontend", "local/bulk"]) await writerReg.createProject({ name });
  await t.client(RegistryService, "other").createProject({ name: "other/x" });
  const core = await resource(t, "writer", "local/api", "core");
  const lib = await resource(t, "writer", "local/api", "lib", [core]);
  const guide = await resource(t, "writer", "local/api", "guide");
  const web = await resource(t, "writer", "local/frontend", "web");
  const foreign = await resource(t, "other", "other/x", "foreign");
  const bulk = await resource(t, "writer", "local/bulk", "bulk");
  const guidePages = 25;
  await upsert(t, "writer", [
    {
      resourceId: core,
      documents: [
        doc("src/retry.ts", "retry with exponential backoff zebra", {
          chunks: [{ text: "retry with exponential backoff zebra", embedding: [1, 0, 0, 0] }],
        }),
        doc("src/twin-a.md", "identical twin words quokka", { chunks: [{ text: "identical twin words quokka", embedding: [0, 1, 0, 0] }] }),
        doc("src/twin-b.md", "identical twin words quokka", { chunks: [{ text: "identical twin words quokka", embedding: [0, 1, 0, 0] }] }),
        doc("src/opposite.md", "opposite direction west", { chunks: [{ text: "opposite direction west", embedding: [-1, 0, 0, 0] }] }),
        doc("secret/keys.md", "secret zebra keys", { chunks: [{ text: "secret zebra keys", embedding: [0.8, 0, 0.6, 0] }] }),
      ],
    },
    {
      resourceId: lib,
      documents: [
        doc("lib/util.md", "utility zebra helpers", { chunks: [{ text: "utility zebra helpers", embedding: [0.6, 0.8, 0, 0] }] }),
      ],
    },
    {
      resourceId: guide,
      documents: Array.from({ length: guidePages }, (_, i) =>
        doc(`guide/page-${String(i).padStart(2, "0")}.md`, `common guide page number ${i}`),
      ),
    },
    {
      resourceId: bulk,
      documents: Array.from({ length: guidePages }, (_, i) =>
        doc(`bulk/item-${String(i).padStart(2, "0")}.md`, `bulk item ${i}`, {
          chunks: [{ text: `bulk item ${i}`, embedding: [0, 0, 0.01 * i, 1] }],
        }),
      ),
    },
    {
      resourceId: web,
      documents: [doc("web/ui.md", "zebra frontend quokka", { chunks: [{ text: "zebra frontend quokka", embedding: [1, 0, 0, 0] }] })],
    },
  ]);
  await upsert(t, "other", [
    {
      resourceId: foreign,
      documents: [
        doc("x.md", "zebra quokka foreign secrets common", {
          chunks: [{ text: "zebra quokka foreign secrets common", embedding: [1, 0, 0, 0] }],
        }),
      ],
    },
  ]);
  const index = t.client(IndexService, "writer");
  await index.putTriples({
    resourceId: core,
    replace: true,
    triples: [
      { subject: iri(`${EX}A`), predicate: iri(`${EX}p`), object: iri(`${EX}B`) },
      { subject: iri(`${EX}A`), predicate: iri(RDFS_LABEL), object: lit("Alpha zebra") },
      { subject: iri(`${EX}B`), predicate: iri(`${EX}p`), object: iri(`${EX}C`) },
      { subject: iri(`${EX}C`), predicate: iri(`${EX}p`), object: iri(`${EX}D`) },
      { subject: iri(`${EX}D`), predicate: iri(`${EX}p`), object: iri(`${EX}E`) },
    ],
  });
  await index.putTriples({
    resourceId: web,
    replace: true,
    triples: [{ subject: iri(`${EX}W`), predicate: iri(`${EX}p`), object: iri(`${EX}A`) }],
  });
  await t.client(IndexService, "other").putTriples({
    resourceId: foreign,
    replace: true,
    triples: [
      { subject: iri(`${EX}A`), predicate: iri(`${EX}secret`), object: lit("foreign secret") },
      { subject: iri(`${EX}F`), predicate: iri(`${EX}p`), object: iri(`${EX}G`) },
    ],
  });
  return {
    core,
    lib,
    guide,
    web,
    foreign,
    apiScope: await scope(t, "writer", ["local/api"]),
    bothScope: await scope(t, "writer", ["local/api", "local/frontend"]),
    noSecretScope: await scope(t, "writer", ["local/api"], ["secret/**"]),
    otherScope: await scope(t, "other", ["other/x"]),
    guidePages,
    bulk,
    bulkScope: await scope(t, "writer", ["local/bulk"]),
  };
}

/** A server built from `createBackends(config)` with its backends changed before it starts. */
export interface CustomServer {
  server: AcmsServer;
  client<S extends DescService>(service: S, principal: string, scopeId?: string, protocol?: Protocol): Client<S>;
  close(): Promise<void>;
}

/**
 * Starts the real server on backends from `createBackends(config)` that `change` may edit first: drop an
 * optional backend (as a deployment without it would run) or swap one for a failing implementation.
 */
export async function startCustomServer(change: (backends: Backends) => void): Promise<CustomServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "acms-contract-"));
  const keys: Record<string, string> = {};
  const entries = DEFAULT_PRINCIPALS.map((p) => {
    const key = generateKey();
    keys[p.name] = key;
    return { name: p.name, key_sha256: hashKey(key), projects: p.projects, write: p.write };
  });
  const config = loadConfig({
    ACMS_HOST: "127.0.0.1",
    ACMS_PORT: "0",
    ACMS_DATA_DIR: dataDir,
    ...(await engineEnv(dataDir)),
    ...CONTRACT_ENV,
  });
  const backends: Backends = await createBackends(config);
  change(backends);
  const server = await startServer({ config, keys: new KeyRing(entries), backends, onInternalError: () => undefined, log: quietLog() });
  const sessions: Http2SessionManager[] = [];
  return {
    server,
    client(service, principal, scopeId, protocol = "connect") {
      const sessionManager = new Http2SessionManager(server.url);
      sessions.push(sessionManager);
      const base = {
        baseUrl: server.url,
        httpVersion: "2" as const,
        sessionManager,
        interceptors: [authInterceptor(keys[principal], scopeId)],
      };
      const transport: Transport = protocol === "grpc" ? createGrpcTransport(base) : createConnectTransport(base);
      return createClient(service, transport);
    },
    async close() {
      for (const s of sessions) s.abort();
      await server.close(2000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
