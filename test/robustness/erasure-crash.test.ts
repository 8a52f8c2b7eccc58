import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { IndexService } from "../../gen/acms/v1/index_pb.js";
import { RegistryService } from "../../gen/acms/v1/registry_pb.js";
import { ScopeService } from "../../gen/acms/v1/scope_pb.js";
import { TextBackendService } from "../../gen/acms/v1/text_pb.js";
import { VectorBackendService } from "../../gen/acms/v1/vector_pb.js";
import { generateKey, hashKey } from "../../src/application/access/key-ring.js";
import { freshPostgresDatabase } from "../support/engines/postgres.js";
import { authInterceptor } from "../support/test-server.js";
import { filesHolding } from "../isolation/erasure-fixture.js";
import { listening, spawnServe } from "../support/spawned-server.js";

// kill -9 of a real `acms serve` process in the middle of a large DeleteResource, then a restart: the
// resource is gone from every read at once (all or nothing), the erasure completes on its own (and a retried
// DeleteResource completes or finds it done), and no byte of it is left. On the embedded default and on PostgreSQL.

const MARKER = "qzxcrashmarkerword";
/** Chunks of the doomed resource: far more than one erasure slice (256), so the kill lands between slices. */
const CHUNKS = Number(process.env.ERASE_CRASH_CHUNKS ?? 20_000);
const trace = (what: string) => {
  if (process.env.ERASE_CRASH_TRACE) process.stderr.write(`${new Date().toISOString()} ${what}\n`);
};
const DOCS_PER_MESSAGE = 500;

function clientOf<S extends DescService>(url: string, service: S, key: string, scopeId?: string): Client<S> {
  return createClient(service, createConnectTransport({ baseUrl: url, httpVersion: "1.1", interceptors: [authInterceptor(key, scopeId)] }));
}

async function* messages(
  resourceId: string,
  from0: number,
  to: number,
): AsyncIterable<{
  resourceId: string;
  documents: { path: string; content: string; metadata: Record<string, string>; chunks: { text: string; embedding: number[] }[] }[];
}> {
  for (let from = from0; from < to; from += DOCS_PER_MESSAGE) {
    const documents = [];
    for (let i = from; i < Math.min(to, from + DOCS_PER_MESSAGE); i++) {
      const text = `zebra ${MARKER} doc${i}`;
      documents.push({ path: `d/${i}.md`, content: text, metadata: {}, chunks: [{ text, embedding: [1, (i % 7) / 7, 0, 0] }] });
    }
    yield { resourceId, documents };
  }
}

/** The doomed resource's chunk rows left in the store (read beside the dead server). */
type RowsLeft = (resourceId: string) => Promise<number>;

async function crashMidErasure(env: Record<string, string>, dataDir: string, rowsLeft: RowsLeft): Promise<void> {
  const key = generateKey();
  const keys = JSON.stringify([{ name: "ops", key_sha256: hashKey(key), projects: ["*/*"], write: true }]);
  const serveEnv = { ...env, ACMS_KEYS: keys, ACMS_DATA_DIR: dataDir, ACMS_EMBEDDING_DIM: "4" };
  let doomed = "";
  let keeper = "";
  let scopeId = "";
  const first = spawnServe(serveEnv);
  try {
    const url = await listening(first);
    const reg = clientOf(url, RegistryService, key);
    await reg.createProject({ name: "local/crash" });
    doomed = (await reg.registerResource({ project: "local/crash", alias: "doomed", kind: "repo" })).resource!.id;
    keeper = (await reg.registerResource({ project: "local/crash", alias: "keeper", kind: "repo" })).resource!.id;
    const idx = clientOf(url, IndexService, key);
    trace("uploading");
    // Several calls, each well within the call time budget (PostgreSQL writes a few thousand chunks a second here).
    for (let from = 0; from < CHUNKS; from += 2500) await idx.upsertDocuments(messages(doomed, from, Math.min(CHUNKS, from + 2500)));
    trace("uploaded");
    await idx.upsertDocuments(
      (async function* () {
        yield {
          resourceId: keeper,
          documents: [{ path: "k.md", content: "zebra keeper", metadata: {}, chunks: [{ text: "zebra keeper", embedding: [0, 1, 0, 0] }] }],
        };
      })(),
    );
    scopeId = (await clientOf(url, ScopeService, key).resolveScope({ projects: ["local/crash"], temporalScope: "all" })).scope!.scopeId;
    expect(await rowsLeft(doomed)).toBe(CHUNKS);
    // The intent is committed when the resource leaves the listing: the kill comes right then, mid-erasure.
    const deleting = reg.deleteResource({ resourceId: doomed }).catch(() => undefined);
    for (;;) {
      const { resources } = await reg.listResources({ project: "local/crash" });
      if (!resources.some((r) => r.id === doomed)) break;
    }
    trace("killing");
    first.child.kill("SIGKILL");
    await first.exit;
    await deleting;
  } finally {
    first.child.kill("SIGKILL");
  }
  // Killed between the intent and the end: some rows erased, not all (the erasure was under way).
  const left = await rowsLeft(doomed);
  trace(`left ${left}`);
  expect(left).toBeGreaterThan(0);
  expect(left).toBeLessThanOrEqual(CHUNKS);

  const second = spawnServe(serveEnv);
  try {
    const url = await listening(second);
    // All or nothing from the first call on: the stored scope finds none of it while the erasure completes.
    const text = clientOf(url, TextBackendService, key, scopeId);
    const found = await text.search({ query: MARKER, maxResults: 10 });
    expect(found.results).toEqual([]);
    const vec = await clientOf(url, VectorBackendService, key, scopeId)
      .similaritySearch({ embedding: [1, 0, 0, 0], topK: 10 })
      .catch(() => ({ results: [] }));
    expect(vec.results.filter((r) => r.resourceId === doomed)).toEqual([]);
    // A retry completes it (or finds it done by the resumed erasure: then the id is unknown, refused as such).
    await clientOf(url, RegistryService, key)
      .deleteResource({ resourceId: doomed })
      .catch(() => undefined);
    trace("retried");
    for (;;) {
      if ((await rowsLeft(doomed)) === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const { resources } = await clientOf(url, RegistryService, key).listResources({ project: "local/crash" });
    expect(resources.map((r) => r.id)).toEqual([keeper]);
    const keep = await text.search({ query: "keeper", maxResults: 10 });
    expect(keep.results.map((r) => r.resourceId)).toEqual([keeper]);
    // The resumed or retried erasure ended with the registry row: wait for it, then look at the bytes.
    await clientOf(url, RegistryService, key)
      .deleteResource({ resourceId: doomed })
      .then(
        () => undefined,
        () => undefined,
      );
    if (env.ACMS_POSTGRES_URL === undefined) expect(filesHolding(dataDir, MARKER)).toEqual([]);
  } finally {
    second.child.kill("SIGKILL");
    await second.exit;
  }
}

describe("kill -9 during a large DeleteResource", () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "acms-erase-crash-"));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("on the embedded default: all or nothing, then the erasure completes", async () => {
    const rowsLeft: RowsLeft = async (id) => {
      const db = new Database(join(dataDir, "acms.db"), { readonly: true });
      try {
        return (db.prepare("SELECT COUNT(*) AS n FROM chunks WHERE resource_id = ?").get(id) as { n: number }).n;
      } finally {
        db.close();
      }
    };
    await crashMidErasure({}, dataDir, rowsLeft);
  }, 600_000);

  it("on PostgreSQL: all or nothing, then the erasure completes", async () => {
    const url = await freshPostgresDatabase();
    const rowsLeft: RowsLeft = async (id) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return Number((await c.query<{ n: string }>("SELECT count(*)::text AS n FROM chunks WHERE resource_id = $1", [id])).rows[0].n);
      } finally {
        await c.end();
      }
    };
    await crashMidErasure({ ACMS_POSTGRES_URL: url }, dataDir, rowsLeft);
  }, 600_000);
});
