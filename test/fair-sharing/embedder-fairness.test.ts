import { openOnnxEmbedder } from "../../src/adapters/onnx/index.js";
import { FairEmbedder } from "../../src/application/shared/fair-embedder.js";
import type { Embedder } from "../../src/ports/embedder.js";
import { withEmbeddingModel } from "../support/embeddings/embedding-model.js";

// The shared embedder is shared fairly (API.md, "Shared pools"): a tenant's large upload is cut into batches
// queued in its own queue, so another tenant's query embedding waits for at most the batches already running
// (one slice per slot), never for the upload. Checked on the real model by the order batches start in: no
// wall-clock bound.

/** The real embedder, noting the texts of each batch as it starts. */
function recording(inner: Embedder, starts: string[][]): Embedder {
  return {
    description: inner.description,
    maxBatch: inner.maxBatch,
    maxInputChars: inner.maxInputChars,
    ready: () => inner.ready(),
    embed(texts, signal) {
      starts.push([...texts]);
      return inner.embed(texts, signal);
    },
    close: () => inner.close(),
  };
}

withEmbeddingModel({}, (modelDir) => {
  let inner: Embedder;
  beforeAll(() => {
    inner = openOnnxEmbedder({ modelDir: modelDir, workers: 1, intraOpThreads: 1 });
  });
  afterAll(async () => inner?.close());

  it("one tenant's upload of many batches delays another tenant's query by at most one batch", async () => {
    const starts: string[][] = [];
    const pool = new FairEmbedder(recording(inner, starts), { slots: 1, batchSize: 8 });
    const upload = Array.from({ length: 8 * 12 }, (_, i) => `chunk ${i} of a large upload about databases and backups`);
    const big = pool.embed("tenant-a", upload);
    // Let the first batch of the upload start.
    while (starts.length === 0) await new Promise((r) => setImmediate(r));
    const query = await pool.embed("tenant-b", ["how do I rotate keys?"]);
    expect(query[0].length).toBe(384);
    // B's batch started second: after the one batch of A already running, before every other.
    const at = starts.findIndex((b) => b[0] === "how do I rotate keys?");
    expect(at).toBe(1);
    const vectors = await big;
    expect(vectors).toHaveLength(upload.length);
    expect(starts).toHaveLength(13);
  }, 120_000);

  it("two uploads share the pool batch by batch, and a third tenant's query still goes next", async () => {
    const starts: string[][] = [];
    const pool = new FairEmbedder(recording(inner, starts), { slots: 1, batchSize: 4 });
    const a = pool.embed(
      "a",
      Array.from({ length: 16 }, (_, i) => `a ${i}`),
    );
    const b = pool.embed(
      "b",
      Array.from({ length: 16 }, (_, i) => `b ${i}`),
    );
    while (starts.length < 2) await new Promise((r) => setImmediate(r));
    await pool.embed("c", ["query of c"]);
    await Promise.all([a, b]);
    const owners = starts.map((batch) => batch[0].split(" ")[0]);
    // Alternating a, b; c's one batch right after the batches that had started or were next in turn.
    expect(owners.indexOf("query")).toBeLessThanOrEqual(2);
    const ab = owners.filter((o) => o !== "query");
    for (let i = 1; i < ab.length - 1; i++) if (i < 6) expect(ab[i]).not.toBe(ab[i - 1]);
  }, 120_000);

  it("a cancelled caller's queued batches leave the queue; the pool goes on", async () => {
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
