import { Source } from "../../gen/acms/v1/rag_pb.js";
import { openSqliteDatabase, type SqliteDatabase } from "../../src/adapters/kit/sqlite-database.js";
import { SqliteDocumentStore } from "../../src/adapters/sqlite/sqlite-document-store.js";
import { Fts5TextBackend } from "../../src/adapters/sqlite/fts5-text-backend.js";
import { SqliteUnitReader } from "../../src/adapters/sqlite/sqlite-unit-reader.js";
import { InvalidArgumentError, UnavailableError, UnimplementedError } from "../../src/domain/errors.js";
import type { GraphBackend } from "../../src/ports/graph-backend.js";
import type { TextBackend } from "../../src/ports/text-backend.js";
import { hybridSearch, type HybridSearchDeps } from "../../src/application/rag/hybrid-search.js";
import type { RagSource } from "../../src/application/rag/hybrid-request.js";
import { testView } from "../text/text-corpus.js";

const R = "01JAAAAAAAAAAAAAAAAAAAAAAA";
const view = testView([R]);

/** A graph backend whose every query fails the way a crashed engine does. */
function brokenGraph(err: unknown): GraphBackend {
  const fail = () => Promise.reject(err);
  return {
    putTriples: fail,
    clearResource: fail,
    eraseResource: fail,
    query: fail,
    getTriples: fail,
    traverse: fail,
    generation: () => 0n,
    close: () => Promise.resolve(),
  };
}

function brokenText(err: unknown): TextBackend {
  return { hasNativeKeywordSearch: true, search: () => Promise.reject(err) };
}

describe("hybrid search when sources fail", () => {
  let db: SqliteDatabase;
  let deps: HybridSearchDeps;
  let reported: Array<[RagSource, unknown]>;

  beforeEach(async () => {
    db = openSqliteDatabase(":memory:");
    const documents = new SqliteDocumentStore(db);
    await documents.upsertDocuments(
      R,
      [{ path: "a.md", content: "retry with backoff", metadata: {}, chunks: [{ text: "retry with backoff" }] }],
      1_000,
    );
    reported = [];
    deps = {
      documents,
      text: new Fts5TextBackend(db),
      units: new SqliteUnitReader(db),
      embeddingDim: 4,
      maxResultsCap: 1000,
      recentWindowMs: 1000,
      sparqlTimeoutMs: 1000,
      onSourceError: (s, e) => reported.push([s, e]),
    };
  });
  afterEach(() => db.close());

  const req = (over: Partial<Parameters<typeof hybridSearch>[2]> = {}) => ({
    query: "retry",
    embedding: [],
    sources: [],
    weights: [],
    ...over,
  });

  it("a failing source makes the answer partial and says which, the others still answer", async () => {
    const crash = new Error("graph engine crashed");
    const a = await hybridSearch({ ...deps, graph: brokenGraph(crash) }, view, req());
    expect(a.partial).toBe(true);
    expect(a.failedSources).toEqual(["graph"]);
    expect(a.exhaustive).toBe(false);
    expect(a.results.map((r) => r.ukoUri)).toEqual([`uko://${R}/a.md#0`]);
    expect(a.results[0].score).toBe(1);
    expect(reported).toEqual([["graph", crash]]);
  });

  it("a named source without a backend is a failed source; all named sources missing is UNIMPLEMENTED", async () => {
    const a = await hybridSearch(deps, view, req({ sources: [Source.TEXT, Source.GRAPH] }));
    expect(a.failedSources).toEqual(["graph"]);
    expect(a.partial).toBe(true);
    await expect(hybridSearch(deps, view, req({ sources: [Source.GRAPH] }))).rejects.toBeInstanceOf(UnimplementedError);
    await expect(hybridSearch(deps, view, req({ sources: [Source.VECTOR], embedding: [1, 0, 0, 0] }))).rejects.toBeInstanceOf(
      UnimplementedError,
    );
  });

  it("with no sources named, only the sources that apply run: no graph backend is not a failure", async () => {
    const a = await hybridSearch(deps, view, req({ embedding: [1, 0, 0, 0] }));
    expect(a.partial).toBe(false);
    expect(a.failedSources).toEqual([]);
    expect(a.exhaustive).toBe(true);
  });

  it("fails the call only when every source fails: UNAVAILABLE, without the engines' messages", async () => {
    const p = hybridSearch(
      { ...deps, text: brokenText(new Error("SQLITE_CORRUPT at page 7")), graph: brokenGraph(new Error("worker died")) },
      view,
      req(),
    );
    await expect(p).rejects.toBeInstanceOf(UnavailableError);
    await expect(p).rejects.toThrow(/every source failed \(text, graph\)/);
    await expect(p).rejects.not.toThrow(/SQLITE|worker/);
  });

  it("a source refusing the caller's arguments fails the call as it is", async () => {
    const bad = InvalidArgumentError.field("query", "too many terms");
    await expect(hybridSearch({ ...deps, graph: brokenGraph(bad) }, view, req())).rejects.toBe(bad);
  });

  it("the graph source queues its queries as the caller's (the tenant of a shared engine's fair queue)", async () => {
    const tenants: Array<string | undefined> = [];
    const graph: GraphBackend = {
      ...brokenGraph(new Error("unused")),
      query: async (_view, _query, opts) => {
        tenants.push(opts.tenant);
        return { form: "SELECT", variables: ["node", "label"], rows: [], exhaustive: true };
      },
    };
    const a = await hybridSearch({ ...deps, graph }, view, req({ sources: [Source.GRAPH] }), undefined, "tenant-a");
    expect(a.failedSources).toEqual([]);
    expect(tenants.length).toBeGreaterThan(0);
    expect(new Set(tenants)).toEqual(new Set(["tenant-a"]));
  });

  it("a cancelled call stops", async () => {
    const ctl = new AbortController();
    ctl.abort();
    await expect(hybridSearch(deps, view, req(), ctl.signal)).rejects.toBeDefined();
  });
});
