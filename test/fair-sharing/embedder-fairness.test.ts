import { openOnnxEmbedder } from "../../src/adapters/onnx/index.js";
import { FairEmbedder, QUERY_BURST_MAX } from "../../src/application/shared/fair-embedder.js";
import type { Embedder } from "../../src/ports/embedder.js";
import { withEmbeddingModel } from "../support/embeddings/embedding-model.js";

// The shared embedder is shared fairly (API.md, "Shared pools"): a tenant's large upload is embedded a slice at
// a time (as many texts as fit ACMS_EMBED_SLICE_MS of model time), each slice queued again in the tenant's own
// queue, and query embeddings go before any bulk slice, so another tenant's query waits for at most the slice
// already running, never for the upload. Checked on the real model by the order batches start in, and the
// slice sizing on a clock the test moves: no wall-clock bound.

/** The real embedder, noting the texts of each batch as it starts, and calling `onStart` then (before it runs). */
function recording(inner: Embedder, starts: string[][], onStart?: (texts: readonly string[], index: number) => void): Embedder {
  return {
    description: inner.description,
    maxBatch: inner.maxBatch,
    maxInputChars: inner.maxInputChars,
    ready: () => inner.ready(),
    embed(texts, signal) {
      starts.push([...texts]);
      onStart?.(texts, starts.length - 1);
      return inner.embed(texts, signal);
    },
    close: () => inner.close(),
  };
}

const owner = (batch: readonly string[]) => batch[0].split(" ")[0];

withEmbeddingModel({}, (modelDir) => {
  let inner: Embedder;
  beforeAll(() => {
    inner = openOnnxEmbedder({ modelDir: modelDir, workers: 1, intraOpThreads: 1 });
  });
  afterAll(async () => inner?.close());

  it("a query submitted while a long upload runs is served before the upload's remaining slices", async () => {
    const starts: string[][] = [];
    let query: Promise<Float32Array[]> | undefined;
    let submittedAt = -1;
    const pool = new FairEmbedder(
      recording(inner, starts, (_texts, index) => {
        // While the upload's first slice runs (the rest of it queued), tenant b asks for a query embedding.
        if (index === 1) {
          submittedAt = index;
          query = pool.embed("tenant-b", ["b: how do I rotate keys?"], undefined, "query");
        }
      }),
      { slots: 1, batchSize: 8 },
    );
    const upload = Array.from({ length: 40 }, (_, i) => `a: chunk ${i} of a large upload about databases and backups`);
    // b was served just before (by served-longest-ago alone, c, never served, would go before b's query).
    await pool.embed("tenant-b", ["b: an earlier chunk"]);
    const big = pool.embed("tenant-a", upload);
    // Tenant c's upload waits too, never served yet: b's query still goes before it (queries before bulk work).
    const other = pool.embed(
      "tenant-c",
      Array.from({ length: 4 }, (_, i) => `c: chunk ${i}`),
    );
    const vectors = await big;
    await other;
    const [q] = await (query as Promise<Float32Array[]>);
    expect(q.length).toBe(384);
    // b's query started right after the slice that was running when it came, before every other bulk slice.
    const at = starts.findIndex((b) => b[0] === "b: how do I rotate keys?");
    expect(submittedAt).toBe(1);
    expect(at).toBe(2);
    const later = starts.slice(3);
    expect(later.filter((b) => owner(b) === "a:").length).toBeGreaterThan(0);
    expect(later.every((b) => owner(b) !== "b:")).toBe(true);
    // The upload's slices are at most batchSize texts, cover it once in order, and its vectors come back in order.
    expect(starts.filter((b) => owner(b) === "a:").flat()).toEqual(upload);
    expect(Math.max(...starts.map((b) => b.length))).toBeLessThanOrEqual(8);
    expect(vectors).toHaveLength(upload.length);
    const [first, last] = await inner.embed([upload[0], upload[39]]);
    for (const [got, want] of [
      [vectors[0], first],
      [vectors[39], last],
    ]) {
      let cos = 0;
      for (let d = 0; d < 384; d++) cos += got[d] * want[d];
      expect(cos).toBeGreaterThan(0.9999);
    }
  }, 120_000);

  it("two uploads share the pool slice by slice, and a third tenant's query goes next", async () => {
    const starts: string[][] = [];
    let query: Promise<Float32Array[]> | undefined;
    const pool = new FairEmbedder(
      recording(inner, starts, (_texts, index) => {
        if (index === 3) query = pool.embed("c", ["c query"], undefined, "query");
      }),
      { slots: 1, batchSize: 4 },
    );
    const a = pool.embed(
      "a",
      Array.from({ length: 16 }, (_, i) => `a ${i}`),
    );
    const b = pool.embed(
      "b",
      Array.from({ length: 16 }, (_, i) => `b ${i}`),
    );
    await Promise.all([a, b]);
    await query;
    const owners = starts.map(owner);
    expect(owners.indexOf("c")).toBe(4);
    // a and b alternate while both have texts left.
    const ab = owners.filter((o) => o !== "c");
    const firstDone = Math.min(ab.lastIndexOf("a"), ab.lastIndexOf("b"));
    for (let i = 1; i <= firstDone; i++) expect(ab[i]).not.toBe(ab[i - 1]);
  }, 120_000);

  it("a flood of queries never stops an upload: a bulk slice goes after at most QUERY_BURST_MAX queries", async () => {
    const starts: string[][] = [];
    const queries: Promise<Float32Array[]>[] = [];
    const pool = new FairEmbedder(
      recording(inner, starts, (_texts, index) => {
        if (index === 0) for (let i = 0; i < 20; i++) queries.push(pool.embed(`q${i % 3}`, [`q query ${i}`], undefined, "query"));
      }),
      { slots: 1, batchSize: 2 },
    );
    await pool.embed(
      "u",
      Array.from({ length: 12 }, (_, i) => `u chunk ${i}`),
    );
    await Promise.all(queries);
    const owners = starts.map(owner);
    expect(owners.slice(1, 1 + QUERY_BURST_MAX).every((o) => o === "q")).toBe(true);
    expect(owners[1 + QUERY_BURST_MAX]).toBe("u");
  }, 120_000);

  it("sizes bulk slices by the time batches took: small when texts are slow, up to batchSize when fast", async () => {
    // A clock the test moves: each batch "takes" perTextMs per text (the real model embeds it meanwhile).
    let clock = 0;
    let perTextMs = 40;
    const starts: string[][] = [];
    const timed = recording(inner, starts, (texts) => (clock += texts.length * perTextMs));
    const texts = (prefix: string) => Array.from({ length: 40 }, (_, i) => `${prefix} text number ${String(i).padStart(3, "0")}`);
    const pool = new FairEmbedder(timed, { slots: 1, batchSize: 16, sliceMs: 100, now: () => clock });
    await pool.embed("a", texts("slow"));
    // 40 ms a text, slices of 100 ms: two texts each (three would take 120 ms), once the first (one text) was timed.
    const slow = starts.map((b) => b.length);
    expect(slow[0]).toBe(1);
    expect(slow.slice(1, -1).every((n) => n === 2)).toBe(true);
    starts.length = 0;
    perTextMs = 1;
    await pool.embed("a", texts("fast"));
    // 1 ms a text: the slices grow (at most doubling from one to the next) up to batchSize, never past it.
    const fast = starts.map((b) => b.length);
    expect(fast).toContain(16);
    expect(Math.max(...fast)).toBe(16);
    for (let i = 1; i < fast.length; i++) expect(fast[i]).toBeLessThanOrEqual(2 * fast[i - 1]);
  }, 120_000);

  it("a slot kept for queries (querySlots) never runs bulk work, so a query starts while a bulk slice still runs", async () => {
    const two = openOnnxEmbedder({ modelDir: modelDir, workers: 2, intraOpThreads: 1 });
    try {
      const starts: string[][] = [];
      let bulkRunning = 0;
      let mostBulk = 0;
      let bulkRunningAtQuery = -1;
      let query: Promise<Float32Array[]> | undefined;
      // The real model, counting the bulk slices running at once; at the third start, b asks for a query embedding.
      const counting: Embedder = {
        description: two.description,
        maxBatch: two.maxBatch,
        maxInputChars: two.maxInputChars,
        ready: () => two.ready(),
        close: () => two.close(),
        async embed(texts, signal) {
          const bulk = owner(texts) === "u";
          if (bulk) mostBulk = Math.max(mostBulk, ++bulkRunning);
          else bulkRunningAtQuery = bulkRunning;
          starts.push([...texts]);
          if (starts.length === 3) query = pool.embed("b", ["q: a query while bulk work runs"], undefined, "query");
          try {
            return await two.embed(texts, signal);
          } finally {
            if (bulk) bulkRunning -= 1;
          }
        },
      };
      const pool = new FairEmbedder(counting, { slots: 2, querySlots: 1, batchSize: 4 });
      await Promise.all([
        pool.embed(
          "u",
          Array.from({ length: 24 }, (_, i) => `u chunk ${i} of an upload`),
        ),
        pool.embed(
          "u2",
          Array.from({ length: 8 }, (_, i) => `u chunk ${i} of another upload`),
        ),
      ]);
      await query;
      // Two uploads and two slots, yet never two bulk slices at once; the query ran beside one.
      expect(mostBulk).toBe(1);
      expect(bulkRunningAtQuery).toBe(1);
    } finally {
      await two.close();
    }
  }, 120_000);

  it("a cancelled caller's queued slices leave the queue; the pool goes on", async () => {
    const starts: string[][] = [];
    const pool = new FairEmbedder(recording(inner, starts), { slots: 1, batchSize: 2 });
    const ctl = new AbortController();
    const doomed = pool.embed(
      "a",
      Array.from({ length: 40 }, (_, i) => `doomed ${i}`),
      ctl.signal,
    );
    while (starts.length === 0) await new Promise((r) => setImmediate(r));
    ctl.abort(new Error("gone"));
    await expect(doomed).rejects.toThrow("gone");
    expect(pool.waiting).toBe(0);
    const [v] = await pool.embed("b", ["still serving"]);
    expect(v.length).toBe(384);
    expect(starts.length).toBeLessThanOrEqual(3);
  }, 120_000);
});
