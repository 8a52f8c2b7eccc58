import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import pg from "pg";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RagService } from "../../gen/acms/v1/rag_pb.js";
import { ContextTierService, Role, Tier } from "../../gen/acms/v1/tiers_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService as TextService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService as VectorService } from "../../gen/acms/v1/vector_pb.js";
import { generateKey, hashKey } from "../../src/application/access/key-ring.js";
import { authInterceptor } from "../support/test-server.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";

jest.setTimeout(180_000);

const ROOT = join(__dirname, "..", "..");
const KEY = generateKey();
const KEYS = JSON.stringify([{ name: "admin", key_sha256: hashKey(KEY), projects: ["*/*"], write: true }]);

/** One `acms serve` process on the shared database, with its own data directory (graph, cold files). */
interface Replica {
  url: string;
  child: ChildProcess;
  dir: string;
  client<S extends DescService>(service: S, scopeId?: string): Client<S>;
  stop(): Promise<void>;
}

const sessions: Http2SessionManager[] = [];

async function startReplica(postgresUrl: string): Promise<Replica> {
  const dir = mkdtempSync(join(tmpdir(), "acms-replica-"));
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      ACMS_HOST: "127.0.0.1",
      ACMS_PORT: "0",
      ACMS_DATA_DIR: dir,
      ACMS_KEYS: KEYS,
      ACMS_POSTGRES_URL: postgresUrl,
      ACMS_EMBEDDING_DIM: "4",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (m) resolve(m[1]);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before listening: ${output}`)));
  });
  return {
    url,
    child,
    dir,
    client(service, scopeId) {
      const sessionManager = new Http2SessionManager(url);
      sessions.push(sessionManager);
      return createClient(
        service,
        createConnectTransport({ baseUrl: url, httpVersion: "2", sessionManager, interceptors: [authInterceptor(KEY, scopeId)] }),
      );
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function killNow(r: Replica): Promise<unknown> {
  const exited = new Promise((resolve) => r.child.once("exit", resolve));
  r.child.kill("SIGKILL");
  return exited;
}

async function* one<T>(m: T): AsyncIterable<T> {
  yield m;
}

describe("two server processes on one PostgreSQL database", () => {
  let postgresUrl: string;
  let a: Replica;
  let b: Replica;
  let resourceId: string;
  let scopeId: string;

  beforeAll(async () => {
    postgresUrl = await freshPostgresDatabase();
    // Both start at once: the migrations run under an advisory lock, once.
    [a, b] = await Promise.all([startReplica(postgresUrl), startReplica(postgresUrl)]);
    await a.client(RegistryService).createProject({ name: "local/api" });
    ({ resource: { id: resourceId } = { id: "" } } = await a
      .client(RegistryService)
      .registerResource({ project: "local/api", alias: "core", kind: "repo" }));
  });
  afterAll(async () => {
    for (const s of sessions) s.abort();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test("a scope resolved through one server is used through the other", async () => {
    const { scope } = await a.client(ScopeService).resolveScope({ projects: ["local/api"] });
    scopeId = scope!.scopeId;
    const got = await b.client(ScopeService).getScope({ scopeId });
    expect(got.scope?.resourceIds).toEqual([resourceId]);
    const answer = await b.client(TextService, scopeId).search({ query: "anything" });
    expect(answer.scopeId).toBe(scopeId);
  });

  test("a document written through one is found through the other at once (the answer's index_generation is at least the write's)", async () => {
    const written = await a.client(IndexService).upsertDocuments(
      one({
        resourceId,
        documents: [
          {
            path: "docs/replica.md",
            content: "replicated zebra notes",
            metadata: {},
            chunks: [{ text: "replicated zebra notes", embedding: [0, 0, 1, 0] }],
          },
        ],
      }),
    );
    expect(written.documentsUpserted).toBe(1);
    const text = await b.client(TextService, scopeId).search({ query: "zebra" });
    expect(text.results.map((r) => r.path)).toEqual(["docs/replica.md"]);
    expect(text.indexGeneration).toBeGreaterThanOrEqual(written.indexGeneration);
    const vector = await b.client(VectorService, scopeId).similaritySearch({ embedding: [0, 0, 1, 0], topK: 3, minScore: 0.5 });
    expect(vector.results.map((r) => r.path)).toEqual(["docs/replica.md"]);
    // And the other way round.
    const back = await b.client(IndexService).upsertDocuments(
      one({
        resourceId,
        documents: [
          {
            path: "docs/back.md",
            content: "written through b: okapi",
            metadata: {},
            chunks: [{ text: "written through b: okapi", embedding: [0, 1, 0, 0] }],
          },
        ],
      }),
    );
    const seen = await a.client(TextService, scopeId).search({ query: "okapi" });
    expect(seen.results.map((r) => r.path)).toEqual(["docs/back.md"]);
    expect(seen.indexGeneration).toBeGreaterThanOrEqual(back.indexGeneration);
    expect(
      (await a.client(VectorService, scopeId).similaritySearch({ embedding: [0, 1, 0, 0], topK: 3, minScore: 0.5 })).results.map(
        (r) => r.path,
      ),
    ).toEqual(["docs/back.md"]);
  });

  test("every store written through one server is read through the other: registry, scopes, documents, text, vectors, tiers", async () => {
    // Registry: a project and a resource made through b are listed and resolved through a.
    await b.client(RegistryService).createProject({ name: "local/web" });
    const { resource } = await b.client(RegistryService).registerResource({ project: "local/web", alias: "site", kind: "repo" });
    expect((await a.client(RegistryService).listProjects({})).projects.map((p) => p.name)).toEqual(
      expect.arrayContaining(["local/api", "local/web"]),
    );
    expect((await a.client(RegistryService).listResources({ project: "local/web" })).resources.map((r) => r.id)).toEqual([resource!.id]);
    expect((await a.client(RegistryService).resolveAlias({ project: "local/web", aliasOrId: "site" })).resourceId).toBe(resource!.id);
    // Scopes: resolved through a, read through b.
    const { scope } = await a.client(ScopeService).resolveScope({ projects: ["local/web"] });
    expect((await b.client(ScopeService).getScope({ scopeId: scope!.scopeId })).scope?.resourceIds).toEqual([resource!.id]);
    const web = scope!.scopeId;
    // Documents, text and vectors: written through a, fetched and searched through b at the write's generation.
    const written = await a.client(IndexService).upsertDocuments(
      one({
        resourceId: resource!.id,
        documents: [
          {
            path: "pages/home.md",
            content: "the home page of the quokka site",
            metadata: { lang: "en" },
            chunks: [{ text: "the home page of the quokka site", embedding: [1, 0, 0, 0] }],
          },
        ],
      }),
    );
    const text = await b.client(TextService, web).search({ query: "quokka" });
    expect(text.results.map((r) => [r.path, r.ukoUri])).toEqual([["pages/home.md", expect.any(String)]]);
    expect(text.indexGeneration).toBeGreaterThanOrEqual(written.indexGeneration);
    const fetched = await b.client(RagService, web).fetchContent({ ukoUris: [text.results[0].ukoUri] });
    expect(fetched.items.map((i) => [i.path, i.content, i.metadata])).toEqual([
      ["pages/home.md", "the home page of the quokka site", { lang: "en" }],
    ]);
    const vector = await b.client(VectorService, web).similaritySearch({ embedding: [1, 0, 0, 0], topK: 3, minScore: 0.5 });
    expect(vector.results.map((r) => r.path)).toEqual(["pages/home.md"]);
    expect(vector.indexGeneration).toBeGreaterThanOrEqual(written.indexGeneration);
    // A delete through b is seen through a.
    const deleted = await b.client(IndexService).deleteDocuments({ resourceId: resource!.id, paths: ["pages/home.md"] });
    const after = await a.client(TextService, web).search({ query: "quokka" });
    expect(after.results).toEqual([]);
    expect(after.indexGeneration).toBeGreaterThanOrEqual(deleted.indexGeneration);
    expect((await a.client(VectorService, web).similaritySearch({ embedding: [1, 0, 0, 0], topK: 3, minScore: 0.5 })).results).toEqual([]);
    // Tiers: warm and cold fragments stored through a are all in the database, so a server started on
    // it afterwards (with a data directory of its own) serves them; one already running sees them at once
    // (the next test).
    const tiers = a.client(ContextTierService, web);
    const warmId = (
      await tiers.storeFragment({
        fragment: { content: "warm context shared across servers", tier: Tier.WARM, projectName: "local/web", metadata: {} },
      })
    ).fragment!.fragmentId;
    const coldId = (
      await tiers.storeFragment({
        fragment: { content: "cold context shared across servers", tier: Tier.COLD, projectName: "local/web", metadata: {} },
      })
    ).fragment!.fragmentId;
    const c = await startReplica(postgresUrl);
    try {
      const onC = c.client(ContextTierService, web);
      const warm = await onC.getFragment({ fragmentId: warmId });
      expect([warm.fragment?.tier, warm.fragment?.content]).toEqual([Tier.WARM, "warm context shared across servers"]);
      const cold = await onC.getFragment({ fragmentId: coldId });
      expect([cold.fragment?.tier, cold.fragment?.content]).toEqual([Tier.COLD, "cold context shared across servers"]);
    } finally {
      await c.stop();
    }
  });

  test("tier placement is shared by the running servers: stored and promoted through one, where it went through the other at once", async () => {
    const onA = a.client(ContextTierService, scopeId);
    const onB = b.client(ContextTierService, scopeId);
    const { fragment } = await onA.storeFragment({
      fragment: { content: "placed through a", tier: Tier.WARM, projectName: "local/api", metadata: {} },
    });
    const id = fragment!.fragmentId;
    expect((await onB.getFragment({ fragmentId: id })).fragment?.tier).toBe(Tier.WARM);
    await onA.promoteFragment({ fragmentId: id });
    expect((await onB.getFragment({ fragmentId: id })).fragment?.tier).toBe(Tier.HOT);
    await onB.demoteFragment({ fragmentId: id });
    await onB.demoteFragment({ fragmentId: id });
    const listed = await onA.getForActor({ role: Role.STRATEGIST, projectNames: ["local/api"], includeFullContent: true });
    expect(listed.fragments.filter((f) => f.fragmentId === id).map((f) => [f.tier, f.content])).toEqual([[Tier.COLD, "placed through a"]]);
    expect((await onA.evictLru({ tier: Tier.COLD, count: 10 })).fragmentIds).toContain(id);
    await expect(onB.getFragment({ fragmentId: id })).rejects.toThrow(/not found/);
  });

  test("killing one server mid-stream leaves the other serving", async () => {
    const docs = Array.from({ length: 60 }, (_, i) => ({
      path: `docs/stream-${i}.md`,
      content: `streamed walrus ${i}`,
      metadata: {},
      chunks: [{ text: `streamed walrus ${i}` }],
    }));
    await a.client(IndexService).upsertDocuments(one({ resourceId, documents: docs }));
    const victim = await startReplica(postgresUrl);
    const stream = victim.client(TextService, scopeId).searchStream({ query: "walrus", maxResults: 60 });
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done).toBe(false);
    await killNow(victim);
    // The killed server's stream ends or fails (the client sees the connection drop); either way it stops.
    await (async () => {
      for (;;) if ((await it.next()).done) return;
    })().catch(() => undefined);
    const answer = await b.client(TextService, scopeId).search({ query: "walrus", maxResults: 100 });
    expect(answer.results).toHaveLength(60);
    await victim.stop();
  });

  test("kill -9 of a server during ingest loses no acknowledged write", async () => {
    const victim = await startReplica(postgresUrl);
    const acked: string[] = [];
    let n = 0;
    let killed = false;
    const writer = async () => {
      const index = victim.client(IndexService);
      while (!killed) {
        const path = `docs/ingest-${n++}.md`;
        try {
          await index.upsertDocuments(
            one({
              resourceId,
              documents: [{ path, content: `ingested yak ${path}`, metadata: {}, chunks: [{ text: `ingested yak ${path}` }] }],
            }),
          );
          acked.push(path);
        } catch {
          return;
        }
      }
    };
    const writers = Array.from({ length: 4 }, writer);
    while (acked.length < 40) await new Promise((r) => setTimeout(r, 20));
    killed = true;
    await killNow(victim);
    await Promise.all(writers);
    await victim.stop();
    const answer = await b.client(TextService, scopeId).search({ query: "yak", maxResults: 1000 });
    const found = new Set(answer.results.map((r) => r.path));
    expect(acked.filter((p) => !found.has(p))).toEqual([]);
    // What the database holds agrees: every acknowledged document is live exactly once.
    const c = new pg.Client({ connectionString: postgresUrl });
    await c.connect();
    try {
      const { rows } = await c.query<{ path: string; n: number }>(
        "SELECT path, count(*)::int AS n FROM documents WHERE path LIKE 'docs/ingest-%' AND superseded_at IS NULL GROUP BY path",
      );
      const live = new Map(rows.map((r) => [r.path, r.n]));
      expect(acked.filter((p) => live.get(p) !== 1)).toEqual([]);
    } finally {
      await c.end();
    }
  });
});
