import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { UpsertDocumentsRequestSchema } from "../../gen/acms/v1/index_pb.js";
import { TermKind, TripleSchema } from "../../gen/acms/v1/graph_pb.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { SqliteRegistryStore } from "../../src/adapters/sqlite/sqlite-registry-store.js";
import { OxigraphGraphBackend } from "../../src/adapters/oxigraph/oxigraph-graph-backend.js";
import { PartitionedVectorBackend } from "../../src/adapters/kit/vectors/partitioned-vector-backend.js";
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, UnimplementedError } from "../../src/domain/errors.js";
import type { RdfTriple } from "../../src/domain/rdf-term.js";
import type { GraphBackend } from "../../src/ports/graph-backend.js";
import { Indexer } from "../../src/application/indexing/indexer.js";
import { UploadOrder } from "../../src/application/indexing/upload-order.js";
import { chunkText } from "../../src/domain/chunking.js";
import { createPrincipal } from "../../src/domain/principal.js";
import { toRdfTriples } from "../../src/server/routes/triple-input.js";
import { testView } from "../text/text-corpus.js";
import { viewOf } from "../graph/graph-fixtures.js";

const DIM = 3;
const WINDOW = 1_000;
let db: SqliteDatabase;
let store: SqliteDocumentStore;
let vector: PartitionedVectorBackend;
let clock: number;
let resourceId: string;

const iri = (value: string) => ({ kind: TermKind.IRI, value });
const triple = (s: object, p: object, o: object) => create(TripleSchema, { subject: s, predicate: p, object: o });

function indexer(extra: { graph?: GraphBackend } = {}): Indexer {
  return new Indexer({ documents: store, registry: new SqliteRegistryStore(db), vector, embeddingDim: DIM, now: () => clock, ...extra });
}

function msg(docs: Array<{ path: string; content: string; chunks?: Array<{ text: string; embedding: number[] }> }>) {
  return create(UpsertDocumentsRequestSchema, { resourceId, documents: docs.map((d) => ({ ...d, chunks: d.chunks ?? [] })) });
}

async function nearest(query: number[], temporal: "current" | "recent" | "all" = "current") {
  const { hits } = await vector.search(testView([resourceId], { temporal }), Float32Array.from(query), {
    topK: 10,
    minScore: 0,
    now: clock,
    recentWindowMs: WINDOW,
  });
  const chunks = await store.getChunks(hits.map((h) => h.chunkKey));
  return hits.map((h) => chunks.get(h.chunkKey)!.text);
}

beforeEach(async () => {
  db = openSqliteDatabase(":memory:");
  store = new SqliteDocumentStore(db, { retainedVersions: 2 });
  vector = new PartitionedVectorBackend({ dimension: DIM });
  const registry = new SqliteRegistryStore(db);
  await registry.createProject("local/api");
  resourceId = (await registry.registerResource({ id: "", project: "local/api", alias: "api", kind: "repo", parentIds: [], metadata: {} }))
    .id;
  clock = 10_000;
});
afterEach(async () => {
  await vector.close();
  db.close();
});

describe("Indexer and vectors", () => {
  it("applies committed vector changes: new versions upserted, old ones superseded, deleted ones kept for recent", async () => {
    const ix = indexer();
    await ix.upsert(msg([{ path: "a.md", content: "x", chunks: [{ text: "east", embedding: [1, 0, 0] }] }]));
    expect(await nearest([1, 0, 0])).toEqual(["east"]);
    clock += 10;
    await ix.upsert(msg([{ path: "a.md", content: "y", chunks: [{ text: "north", embedding: [0, 1, 0] }] }]));
    expect(await nearest([1, 0, 0])).toEqual(["north"]);
    expect(await nearest([1, 0, 0], "recent")).toEqual(["east", "north"]);
    clock += 10;
    expect((await ix.delete(resourceId, ["a.md"])).deleted).toBe(1);
    expect(await nearest([0, 1, 0])).toEqual([]);
    expect(await nearest([0, 1, 0], "all")).toEqual(["north", "east"]);
  });

  it("drops versions beyond retention from the store, the keyword index and the vectors", async () => {
    const ix = indexer();
    for (let i = 0; i < 5; i++) {
      clock += 10;
      await ix.upsert(msg([{ path: "a.md", content: `v${i}`, chunks: [{ text: `version${i}`, embedding: [1, i, 0] }] }]));
    }
    expect((await nearest([1, 0, 0], "all")).sort()).toEqual(["version2", "version3", "version4"]);
    const rows = db.prepare("SELECT count(*) AS n FROM chunks_fts").get() as { n: number };
    expect(rows.n).toBe(3);
  });

  it("full rebuild wipes and reloads the resource's vectors; incremental keeps them", async () => {
    const ix = indexer();
    await ix.upsert(msg([{ path: "a.md", content: "x", chunks: [{ text: "east", embedding: [1, 0, 0] }] }]));
    vector.clearResource(resourceId);
    expect(await nearest([1, 0, 0])).toEqual([]);
    const principal = createPrincipal("writer", ["local/*"], true);
    const inc = await ix.rebuild(principal, [], false);
    expect(inc).toMatchObject({ resourcesRebuilt: 1, documentsReindexed: 1 });
    expect(await nearest([1, 0, 0])).toEqual(["east"]);
    vector.upsert([{ chunkKey: 999, resourceId, path: "stray.md", supersededAt: null, vector: Float32Array.from([1, 0, 0]) }]);
    const full = await ix.rebuild(principal, [resourceId], true);
    expect(full.generation).toBeGreaterThan(inc.generation);
    expect(await nearest([1, 0, 0])).toEqual(["east"]);
  });

  it("leaves nothing behind when a message is rejected", async () => {
    const ix = indexer();
    const before = await store.generation();
    await expect(
      ix.upsert(
        msg([
          { path: "ok.md", content: "fine" },
          { path: "bad.md", content: "x", chunks: [{ text: "t", embedding: [1, 2] }] },
        ]),
      ),
    ).rejects.toThrow(InvalidArgumentError);
    expect(await store.generation()).toBe(before);
    expect((db.prepare("SELECT count(*) AS n FROM documents").get() as { n: number }).n).toBe(0);
    await expect(
      new Indexer({ documents: store, registry: new SqliteRegistryStore(db), embeddingDim: DIM }).upsert(
        create(UpsertDocumentsRequestSchema, { resourceId: "01JZZZZZZZZZZZZZZZZZZZZZZZ", documents: [{ path: "a", content: "b" }] }),
      ),
    ).rejects.toThrow(NotFoundError);
  });
});

describe("generation", () => {
  it("survives a reopen of the database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acms-gen-"));
    try {
      const file = join(dir, "acms.db");
      const a = openSqliteDatabase(file);
      const s = new SqliteDocumentStore(a);
      await s.upsertDocuments(resourceId, [{ path: "a.md", content: "x", metadata: {}, chunks: [{ text: "x" }] }], 1);
      await s.bumpGeneration();
      a.close();
      const b = openSqliteDatabase(file);
      const reopened = new SqliteDocumentStore(b);
      expect(await reopened.generation()).toBe(2n);
      expect([...(await reopened.getChunks([1])).values()].map((c) => c.ukoUri)).toEqual([`uko://${resourceId}/a.md#0`]);
      b.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("PutTriples", () => {
  it("maps wire triples to RDF losslessly", () => {
    const out = toRdfTriples([
      triple(iri("http://ex.org/s"), iri("http://ex.org/p"), { kind: TermKind.LITERAL, value: "chat", language: "fr" }),
      triple({ kind: TermKind.BLANK, value: "b0" }, iri("http://ex.org/p"), {
        kind: TermKind.LITERAL,
        value: "5",
        datatype: "http://www.w3.org/2001/XMLSchema#integer",
      }),
      triple(iri("urn:x"), iri("http://ex.org/p"), { kind: TermKind.LITERAL, value: "" }),
    ]);
    expect(out).toEqual<RdfTriple[]>([
      {
        subject: { kind: "iri", value: "http://ex.org/s" },
        predicate: { kind: "iri", value: "http://ex.org/p" },
        object: { kind: "literal", value: "chat", language: "fr" },
      },
      {
        subject: { kind: "blank", value: "b0" },
        predicate: { kind: "iri", value: "http://ex.org/p" },
        object: { kind: "literal", value: "5", datatype: "http://www.w3.org/2001/XMLSchema#integer" },
      },
      {
        subject: { kind: "iri", value: "urn:x" },
        predicate: { kind: "iri", value: "http://ex.org/p" },
        object: { kind: "literal", value: "" },
      },
    ]);
  });

  it("names every bad term", () => {
    const fields = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return (err as InvalidArgumentError).violations.map((v) => v.field);
      }
      return [];
    };
    expect(
      fields(() =>
        toRdfTriples([
          triple(iri(""), iri("http://ex.org/p"), iri("http://ex.org/o")),
          triple(iri("http://ex.org/s"), { kind: TermKind.BLANK, value: "b" }, iri("relative/iri")),
          triple(iri("http://ex.org/<s>"), iri("http://ex.org/p"), { kind: TermKind.LITERAL, value: "x", language: "not a tag" }),
          triple({ kind: TermKind.UNSPECIFIED, value: "x" }, iri("http://ex.org/p"), {
            kind: TermKind.IRI,
            value: "http://ex.org/o",
            language: "en",
          }),
          create(TripleSchema, {}),
        ]),
      ),
    ).toEqual([
      "triples[0].subject",
      "triples[1].predicate",
      "triples[1].object",
      "triples[2].subject",
      "triples[2].object",
      "triples[3].subject",
      "triples[3].object",
      "triples[4].subject",
      "triples[4].predicate",
      "triples[4].object",
    ]);
  });

  it("writes through the graph port with replace semantics and bumps the generation; no graph: UNIMPLEMENTED", async () => {
    const calls: Array<{ resourceId: string; triples: readonly RdfTriple[]; replace: boolean }> = [];
    const graph = {
      async putTriples(id: string, triples: readonly RdfTriple[], replace: boolean) {
        calls.push({ resourceId: id, triples, replace });
        return triples.length;
      },
    } as unknown as GraphBackend;
    const t = toRdfTriples([triple(iri("http://ex.org/s"), iri("http://ex.org/p"), iri("http://ex.org/o"))]);
    const before = await store.generation();
    const r = await indexer({ graph }).putTriples(resourceId, t, true);
    expect(r).toEqual({ count: 1, generation: before + 1n });
    expect(calls).toEqual([{ resourceId, triples: t, replace: true }]);
    await expect(indexer().putTriples(resourceId, t, false)).rejects.toBeInstanceOf(UnimplementedError);
    await expect(indexer({ graph }).putTriples(resourceId, [], false)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe("PutTriples against an erasure", () => {
  it("a write that reaches the graph after the erasure removed it is taken away again and NOT_FOUND", async () => {
    // The real embedded graph; the write is held on its way to it (as a SPARQL endpoint's queue or a slow
    // network holds it) until an erasure has run its intent and its removal of the graph.
    const dir = mkdtempSync(join(tmpdir(), "acms-put-erase-"));
    const oxigraph = await OxigraphGraphBackend.open({ path: join(dir, "graph.db") });
    try {
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      let reached: () => void = () => undefined;
      const heldThere = new Promise<void>((resolve) => (reached = resolve));
      const graph = Object.create(oxigraph) as GraphBackend;
      let hold = false;
      graph.putTriples = async (id, triples, replace) => {
        if (hold) {
          reached();
          await released;
        }
        return oxigraph.putTriples(id, triples, replace);
      };
      graph.eraseResource = (id) => oxigraph.eraseResource(id);
      const registry = new SqliteRegistryStore(db);
      const ix = indexer({ graph });
      const t = toRdfTriples([triple(iri("http://ex.org/s"), iri("http://ex.org/p"), iri("http://ex.org/o"))]);
      const held = (view: string[]) => oxigraph.getTriples(viewOf(view), "http://ex.org/s", { timeoutMs: 20_000 });
      expect((await ix.putTriples(resourceId, t, false)).count).toBe(1);

      hold = true;
      const late = ix.putTriples(resourceId, t, false);
      await heldThere;
      expect(await registry.beginErasure(resourceId)).toBeDefined();
      expect(await oxigraph.eraseResource(resourceId)).toBe(1);
      await registry.finishErasure(resourceId);
      expect((await held([resourceId])).triples).toEqual([]);
      release();
      await expect(late).rejects.toBeInstanceOf(NotFoundError);
      expect((await held([resourceId])).triples).toEqual([]);
      // And one made once the erasure began is refused before it writes.
      hold = false;
      await expect(ix.putTriples(resourceId, t, false)).rejects.toBeInstanceOf(NotFoundError);
    } finally {
      await oxigraph.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("Rebuild shares the event loop", () => {
  test("a rebuild of many resources lets queued work run between resources, with the same result", async () => {
    const registry = new SqliteRegistryStore(db);
    const ix = indexer();
    const ids = [resourceId];
    for (let i = 0; i < 30; i++) {
      ids.push(
        (await registry.registerResource({ id: "", project: "local/api", alias: `r${i}`, kind: "repo", parentIds: [], metadata: {} })).id,
      );
    }
    for (const id of ids)
      await ix.upsert(
        create(UpsertDocumentsRequestSchema, { resourceId: id, documents: [{ path: "a.md", content: `words of ${id}`, chunks: [] }] }),
      );
    const principal = createPrincipal("writer", ["local/*"], true);
    // A macrotask queued when the rebuild starts (as an incoming health check would be) runs before it ends.
    let ranMeanwhile = false;
    setImmediate(() => (ranMeanwhile = true));
    const outcome = await ix.rebuild(principal, [], true);
    expect(ranMeanwhile).toBe(true);
    expect([outcome.resourcesRebuilt, outcome.documentsReindexed]).toEqual([31, 31]);
  });
});

/** `n` more resources of local/api, aliased `${prefix}0`, `${prefix}1`, ...: their ids. */
async function moreResources(prefix: string, n: number): Promise<string[]> {
  const registry = new SqliteRegistryStore(db);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const input = { id: "", project: "local/api", alias: `${prefix}${i}`, kind: "repo", parentIds: [], metadata: {} };
    ids.push((await registry.registerResource(input)).id);
  }
  return ids;
}

describe("group commit of concurrent messages", () => {
  /** Uploads one small document at `path` of resource `id` as a stream's message does (durable at the stream's end). */
  const oneDocument = (ix: Indexer, id: string, path: string) =>
    ix.upsert(
      create(UpsertDocumentsRequestSchema, { resourceId: id, documents: [{ path, content: `words of ${path} in ${id}`, chunks: [] }] }),
      {
        deferDurability: true,
      },
    );

  test("messages under way together commit in one transaction; a lone message commits on its own", async () => {
    const ids = await moreResources("g", 4);
    const ix = indexer();
    const one = (id: string, path: string) => oneDocument(ix, id, path);
    const before = await store.generation();
    const together = await Promise.all(ids.map((id) => one(id, "a.md")));
    expect(new Set(together.map((o) => o.generation))).toEqual(new Set([before + 1n]));
    const alone = await one(ids[0], "b.md");
    expect(alone.generation).toBe(before + 2n);
    expect((await store.counts()).documents).toBe(5);
  });

  test("with several uploads open, a message waits a turn for the others' next; with one open it commits at once", async () => {
    const ids = await moreResources("u", 2);
    const ix = indexer();
    const one = (id: string, path: string) => oneDocument(ix, id, path);
    /** A's message, then B's arriving a turn later (as the next message of another stream does): their generations. */
    const aThenB = async (path: string): Promise<[bigint, bigint]> => {
      const a = one(ids[0], path);
      await new Promise((resolve) => setImmediate(resolve));
      const b = one(ids[1], path);
      return [(await a).generation, (await b).generation];
    };
    // One upload open: nobody to wait for, so A commits alone before B arrives.
    const closeOne = ix.openUpload();
    const [a1, b1] = await aThenB("one.md");
    expect(b1).toBe(a1 + 1n);
    // Two open (each with one message under way at a time): A waits a turn, and B joins its commit.
    const closeTwo = ix.openUpload();
    const [a2, b2] = await aThenB("two.md");
    expect(b2).toBe(a2);
    expect(a2).toBe(b1 + 1n);
    // Closed again (closing twice counts once): back to one open, committing at once.
    closeTwo();
    closeTwo();
    const [a3, b3] = await aThenB("three.md");
    expect(b3).toBe(a3 + 1n);
    closeOne();
    expect((await store.counts()).documents).toBe(6);
  });
});

describe("the messages of one stream under way at once (UploadOrder)", () => {
  /** A stream's message of one document, in its turn of `order`. */
  const inTurn = (ix: Indexer, order: UploadOrder, id: string, path: string, content = `words of ${path} in ${id}`) =>
    ix.upsert(create(UpsertDocumentsRequestSchema, { resourceId: id, documents: [{ path, content, chunks: [] }] }), {
      deferDurability: true,
      turn: order.next(),
    });

  /** The paths of resource `id`'s documents, any version. */
  const livePaths = async (id: string): Promise<string[]> =>
    (db.prepare("SELECT path FROM documents WHERE resource_id = ? ORDER BY path").pluck().all(id) as string[]).slice();

  test("a lone stream's small messages commit together, in one transaction", async () => {
    const ids = await moreResources("s", 4);
    const ix = indexer();
    const close = ix.openUpload();
    const before = await store.generation();
    const order = new UploadOrder();
    const outcomes = await Promise.all(ids.map((id, i) => inTurn(ix, order, id, `m${i}.md`)));
    close();
    expect(outcomes.map((o) => o.generation)).toEqual(ids.map(() => before + 1n));
    // Without turns (messages taken one at a time), a lone message still commits at once.
    const alone = await ix.upsert(
      create(UpsertDocumentsRequestSchema, { resourceId: ids[0], documents: [{ path: "alone.md", content: "alone", chunks: [] }] }),
    );
    expect(alone.generation).toBe(before + 2n);
  });

  test.each([
    ["a store that queues writes in series", false],
    ["a store that does not (the indexer hands over the next write once this one resolved)", true],
  ])("a message after one that fails its checks writes nothing; the one before it stays: %s", async (_name, plainStore) => {
    const ids = await moreResources("v", 3);
    // The SQLite store without its side of UpsertHooks.series, as a store that never calls `queued()`.
    const documents = plainStore
      ? Object.assign(Object.create(store) as SqliteDocumentStore, {
          upsertDocuments: (...[r, d, n, h]: Parameters<SqliteDocumentStore["upsertDocuments"]>) =>
            store.upsertDocuments(r, d, n, h && { ...h, series: undefined }),
        })
      : store;
    const ix = new Indexer({ documents, registry: new SqliteRegistryStore(db), vector, embeddingDim: DIM, now: () => clock });
    const order = new UploadOrder();
    const [first, bad, after] = await Promise.allSettled([
      inTurn(ix, order, ids[0], "first.md"),
      inTurn(ix, order, ids[1], "bad.md", "   "),
      inTurn(ix, order, ids[2], "after.md"),
    ]);
    expect(first).toMatchObject({ status: "fulfilled", value: { documentsUpserted: 1 } });
    expect(bad).toMatchObject({ status: "rejected", reason: expect.any(InvalidArgumentError) });
    expect(after).toMatchObject({ status: "rejected", reason: expect.any(FailedPreconditionError) });
    expect([await livePaths(ids[0]), await livePaths(ids[1]), await livePaths(ids[2])]).toEqual([["first.md"], [], []]);
  });

  test("a message after one that fails in the store, in the same group, writes nothing; the one before it stays", async () => {
    const ids = await moreResources("f", 3);
    const ix = indexer();
    // A fault of the store's own (injected: no valid message fails there otherwise): the write of "boom.md".
    const insertDoc = (store as unknown as { stmts: { insertDoc: { run: (...args: unknown[]) => unknown } } }).stmts.insertDoc;
    const run = insertDoc.run.bind(insertDoc);
    insertDoc.run = (...args: unknown[]) => {
      if (args[1] === "boom.md") throw new Error("disk on fire");
      return run(...args);
    };
    const order = new UploadOrder();
    const before = await store.generation();
    const [first, boom, after] = await Promise.allSettled([
      inTurn(ix, order, ids[0], "first.md"),
      inTurn(ix, order, ids[1], "boom.md"),
      inTurn(ix, order, ids[2], "after.md"),
    ]);
    expect(first).toMatchObject({ status: "fulfilled", value: { documentsUpserted: 1, generation: before + 1n } });
    expect(boom).toMatchObject({ status: "rejected", reason: expect.objectContaining({ message: "disk on fire" }) });
    expect(after).toMatchObject({ status: "rejected", reason: expect.any(FailedPreconditionError) });
    expect([await livePaths(ids[0]), await livePaths(ids[1]), await livePaths(ids[2])]).toEqual([["first.md"], [], []]);
    expect(await store.generation()).toBe(before + 1n);
  });
});

describe("erasure against a message under way", () => {
  test("a message checked before an erasure began writes nothing of the resource after it", async () => {
    const registry = new SqliteRegistryStore(db);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const chunking = new Promise<void>((resolve) => (entered = resolve));
    // The real chunker, held at the gate: the message has passed its first check and waits to be chunked.
    const ix = new Indexer({
      documents: store,
      registry,
      vector,
      embeddingDim: DIM,
      now: () => clock,
      chunker: {
        chunk: async (_tenant, texts, opts) => {
          entered();
          await gate;
          return texts.map((text) => chunkText(text, opts));
        },
        close: async () => undefined,
      },
    });
    const upload = ix.upsert(msg([{ path: "late.md", content: "late words ".repeat(2_000) }]));
    await chunking;
    expect(await registry.beginErasure(resourceId)).toBeDefined();
    const erased = ix.eraseResource(resourceId);
    release();
    await expect(upload).rejects.toBeInstanceOf(NotFoundError);
    await erased;
    expect(await store.getChunks([1, 2, 3, 4, 5, 6, 7, 8])).toEqual(new Map());
    expect((await store.counts()).documents).toBe(0);
  });
});
