import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { newUlid } from "../../src/domain/ulid-id.js";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { authInterceptor, startTestServer, type TestServer } from "../support/test-server.js";
import { GrpcJsGenericClient } from "./grpc-js-generic-client.js";

/** One way a client reaches the server: a protocol over an HTTP version. */
export interface Wire {
  protocol: "connect" | "grpc-web" | "grpc";
  httpVersion: "1.1" | "2";
}

/** Every protocol on every HTTP version it runs on (gRPC needs HTTP/2 trailers). */
export const WIRES: Wire[] = [
  { protocol: "connect", httpVersion: "1.1" },
  { protocol: "connect", httpVersion: "2" },
  { protocol: "grpc-web", httpVersion: "1.1" },
  { protocol: "grpc-web", httpVersion: "2" },
  { protocol: "grpc", httpVersion: "2" },
];

/** Makes transports of any wire and closes their HTTP/2 sessions at the end. */
export class Transports {
  private readonly sessions: Http2SessionManager[] = [];

  constructor(private readonly url: string) {}

  transport(wire: Wire, key?: string, scopeId?: string): Transport {
    const interceptors = [authInterceptor(key, scopeId)];
    if (wire.httpVersion === "1.1") {
      const base = { baseUrl: this.url, httpVersion: "1.1" as const, interceptors };
      return wire.protocol === "connect" ? createConnectTransport(base) : createGrpcWebTransport(base);
    }
    const sessionManager = new Http2SessionManager(this.url);
    this.sessions.push(sessionManager);
    const base = { baseUrl: this.url, httpVersion: "2" as const, sessionManager, interceptors };
    if (wire.protocol === "grpc") return createGrpcTransport(base);
    return wire.protocol === "connect" ? createConnectTransport(base) : createGrpcWebTransport(base);
  }

  client<S extends DescService>(service: S, wire: Wire, key?: string, scopeId?: string): Client<S> {
    return createClient(service, this.transport(wire, key, scopeId));
  }

  close(): void {
    for (const s of this.sessions) s.abort();
  }
}

/** What `seedTenants` made: two tenants' projects and resources, and a scope over the first. */
export interface Seeded {
  /** `local/api` holds `a` (parent) and `b` (child of a). */
  a: string;
  b: string;
  /** `other/x` holds `c`, which `writer` may not see. */
  c: string;
  /** A well-formed id that names nothing. */
  ghost: string;
  /** writer's scope over `local/api`. */
  scopeId: string;
}

/**
 * Registers two tenants as admin (`local/api` with a → b, `other/x` with c) and resolves writer's scope
 * over `local/api`; `suffix` keeps projects distinct when one server serves several suites.
 */
export async function seedTenants(t: TestServer, suffix = ""): Promise<Seeded & { localProject: string; otherProject: string }> {
  const registry = t.client(RegistryService, "admin");
  const localProject = `local/api${suffix}`;
  const otherProject = `other/x${suffix}`;
  await registry.createProject({ name: localProject });
  await registry.createProject({ name: otherProject });
  const a = (await registry.registerResource({ project: localProject, alias: "a", kind: "repo" })).resource!.id;
  const b = (await registry.registerResource({ project: localProject, alias: "b", kind: "docs", parentIds: [a] })).resource!.id;
  const c = (await registry.registerResource({ project: otherProject, alias: "c", kind: "repo" })).resource!.id;
  const scope = (await t.client(ScopeService, "writer").resolveScope({ projects: [localProject] })).scope!;
  return { a, b, c, ghost: newUlid(), scopeId: scope.scopeId, localProject, otherProject };
}

/**
 * For the describe block it is called in: a server started before its tests (`startSeededSearchServer`) and
 * closed after them, with the writer's key and the seeded scope as headers (`auth()`).
 */
export function seededSearchServer(): { readonly t: TestServer; readonly seeded: Seeded; auth(): Record<string, string> } {
  let started: { t: TestServer; seeded: Seeded } | undefined;
  beforeAll(async () => {
    started = await startSeededSearchServer();
  });
  afterAll(async () => {
    await started?.t.close(true);
  });
  const get = () => {
    if (!started) throw new Error("the server is started in beforeAll");
    return started;
  };
  return {
    get t() {
      return get().t;
    },
    get seeded() {
      return get().seeded;
    },
    auth: () => ({ authorization: `Bearer ${get().t.keys.writer}`, "acms-scope": get().seeded.scopeId }),
  };
}

/**
 * A server with a 64 KiB message limit and the seeded tenants, one document ("src/parser.ts") uploaded to
 * resource `a` over gRPC: what the fast path tests search.
 */
export async function startSeededSearchServer(): Promise<{ t: TestServer; seeded: Seeded }> {
  const t = await startTestServer({ env: { ACMS_MAX_MESSAGE_BYTES: "65536" } });
  const seeded = await seedTenants(t);
  const c = new GrpcJsGenericClient(`127.0.0.1:${t.server.port}`);
  try {
    await c.clientStream(
      IndexService.method.upsertDocuments,
      [{ resourceId: seeded.a, documents: [{ path: "src/parser.ts", content: "the tokenizer feeds the parser" }] }],
      GrpcJsGenericClient.metadata(t.keys.writer),
    );
  } finally {
    c.close();
  }
  return { t, seeded };
}
