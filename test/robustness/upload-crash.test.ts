import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { generateKey, hashKey } from "../../src/application/access/key-ring.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { authInterceptor } from "../support/test-server.js";
import { listening, spawnServe } from "../support/spawned-server.js";

// kill -9 of a real `acms serve` process right after it answered an UpsertDocuments stream of many messages,
// then a restart: everything the answer acknowledged is there (issue 29: a stream's messages commit without
// an fsync each and one durable sync precedes the answer). And a stream that fails midway: its error comes
// back, the messages before the failing one are there after a kill -9, and nothing of the failing one. On the
// embedded default and on PostgreSQL.

const MARKER = "qzxuploadcrashword";
const MESSAGES = 20;
const DOCS_PER_MESSAGE = 40;

function clientOf<S extends DescService>(url: string, service: S, key: string, scopeId?: string): Client<S> {
  return createClient(service, createGrpcTransport({ baseUrl: url, interceptors: [authInterceptor(key, scopeId)] }));
}

type Doc = { path: string; content: string; metadata: Record<string, string>; chunks: { text: string; embedding: number[] }[] };

/** Message `m`: DOCS_PER_MESSAGE documents; odd messages rewrite the previous message's first document (a new version). */
function message(resourceId: string, m: number): { resourceId: string; documents: Doc[] } {
  const documents: Doc[] = [];
  for (let i = 0; i < DOCS_PER_MESSAGE; i++) {
    const text = `${MARKER} message${m} doc${i}`;
    // Half with the client's chunks and vectors, half chunked by the server (no vector).
    documents.push({
      path: `m${m}/d${i}.md`,
      content: text,
      metadata: {},
      chunks: i % 2 === 0 ? [{ text, embedding: [1, m / MESSAGES, i / 100, 0] }] : [],
    });
  }
  if (m % 2 === 1) {
    const text = `${MARKER} rewritten by message${m}`;
    documents.push({ path: `m${m - 1}/d0.md`, content: text, metadata: {}, chunks: [{ text, embedding: [0, 1, 0, m] }] });
  }
  return { resourceId, documents };
}

/** The live documents of the resource a scope holds, by path, found through keyword search (and their text). */
async function livePaths(url: string, key: string, scopeId: string): Promise<Map<string, string>> {
  const text = clientOf(url, TextBackendService, key, scopeId);
  const { results } = await text.search({ query: MARKER, maxResults: 1000 });
  const out = new Map<string, string>();
  for (const r of results) out.set(r.path, r.content);
  return out;
}

async function crashAfterAnswer(env: Record<string, string>, dataDir: string): Promise<void> {
  const key = generateKey();
  const keys = JSON.stringify([{ name: "ops", key_sha256: hashKey(key), projects: ["*/*"], write: true }]);
  const serveEnv = { ...env, ACMS_KEYS: keys, ACMS_DATA_DIR: dataDir, ACMS_EMBEDDING_DIM: "4" };
  let whole = "";
  let broken = "";
  let wholeScope = "";
  let brokenScope = "";
  const first = spawnServe(serveEnv);
  try {
    const url = await listening(first);
    const reg = clientOf(url, RegistryService, key);
    await reg.createProject({ name: "local/upload" });
    whole = (await reg.registerResource({ project: "local/upload", alias: "whole", kind: "repo" })).resource!.id;
    broken = (await reg.registerResource({ project: "local/upload", alias: "broken", kind: "repo" })).resource!.id;
    const scopes = clientOf(url, ScopeService, key);
    wholeScope = (await scopes.resolveScope({ projects: ["local/upload"], includeResources: [whole] })).scope!.scopeId;
    brokenScope = (await scopes.resolveScope({ projects: ["local/upload"], includeResources: [broken] })).scope!.scopeId;
    const idx = clientOf(url, IndexService, key);
    // A stream whose fourth message is invalid (an empty content among valid documents): an error, after three committed messages.
    const failed = await idx
      .upsertDocuments(
        (async function* () {
          for (let m = 0; m < 3; m++) yield message(broken, m);
          const bad = message(broken, 3);
          bad.documents[5].content = " ";
          yield bad;
          yield message(broken, 4);
        })(),
      )
      .then(
        () => undefined,
        (err: unknown) => ConnectError.from(err),
      );
    expect(failed?.code).toBe(Code.InvalidArgument);
    expect(failed?.rawMessage).toMatch(/stream message 4/);
    const answer = await idx.upsertDocuments(
      (async function* () {
        for (let m = 0; m < MESSAGES; m++) yield message(whole, m);
      })(),
    );
    // The answer acknowledges the whole stream: the kill comes at once.
    first.child.kill("SIGKILL");
    expect(answer.messagesReceived).toBe(MESSAGES);
    expect(answer.documentsUpserted).toBe(MESSAGES * DOCS_PER_MESSAGE + MESSAGES / 2);
    await first.exit;
  } finally {
    first.child.kill("SIGKILL");
  }

  const second = spawnServe(serveEnv);
  try {
    const url = await listening(second);
    const live = await livePaths(url, key, wholeScope);
    expect(live.size).toBe(MESSAGES * DOCS_PER_MESSAGE);
    for (let m = 0; m < MESSAGES; m++) {
      for (let i = 0; i < DOCS_PER_MESSAGE; i++) {
        const expected = i === 0 && m % 2 === 0 ? `${MARKER} rewritten by message${m + 1}` : `${MARKER} message${m} doc${i}`;
        expect([`m${m}/d${i}.md`, live.get(`m${m}/d${i}.md`)]).toEqual([`m${m}/d${i}.md`, expected]);
      }
    }
    // The vectors came back too (loaded from the store at start): the last rewrite is the nearest to [0, 0, 0, 1].
    const vec = clientOf(url, VectorBackendService, key, wholeScope);
    for (let tries = 0; ; tries++) {
      const got = await vec.similaritySearch({ embedding: [0, 0, 0, 1], topK: 1 }).catch((err: unknown) => ConnectError.from(err));
      if (!(got instanceof ConnectError)) {
        expect(got.results.map((r) => r.path)).toEqual([`m${MESSAGES - 2}/d0.md`]);
        break;
      }
      // Vectors load in the background after a start: UNAVAILABLE until they are.
      expect(got.code).toBe(Code.Unavailable);
      if (tries > 600) throw got;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The failed stream: its first three messages whole, nothing of the fourth (or of the fifth, never read).
    const kept = await livePaths(url, key, brokenScope);
    expect(
      [...kept.keys()]
        .map((p) => p.split("/")[0])
        .filter((m, i, a) => a.indexOf(m) === i)
        .sort(),
    ).toEqual(["m0", "m1", "m2"]);
    expect(kept.size).toBe(3 * DOCS_PER_MESSAGE);
    expect(kept.get("m0/d0.md")).toBe(`${MARKER} rewritten by message1`);
  } finally {
    second.child.kill("SIGKILL");
    await second.exit;
  }
}

describe("kill -9 right after an UpsertDocuments stream's answer", () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "acms-upload-crash-"));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("on the embedded default: every acknowledged message is there, and a failed stream's committed messages only", async () => {
    await crashAfterAnswer({}, dataDir);
  }, 300_000);

  it("on PostgreSQL: every acknowledged message is there, and a failed stream's committed messages only", async () => {
    await crashAfterAnswer({ ACMS_POSTGRES_URL: await freshPostgresDatabase() }, dataDir);
  }, 300_000);
});
