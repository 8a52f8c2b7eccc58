import { openOnnxEmbedder } from "../../src/adapters/onnx/index.js";
import { FairEmbedder } from "../../src/application/shared/fair-embedder.js";
import { withEmbeddingModel } from "../support/embeddings/embedding-model.js";

// Closing the in-process embedder while its model loads or its batches run (a server stopping mid-upload):
// every call made before settles, UNAVAILABLE or with its vectors, and none is left waiting forever. A call
// made while the model loaded used to queue itself after close had emptied the queue, and never settled.

withEmbeddingModel({}, (modelDir) => {
  it("a call waiting for the model to load when the embedder closes is refused, never left pending", async () => {
    const raw = openOnnxEmbedder({ modelDir, workers: 1, intraOpThreads: 1 });
    const pending = raw.embed(["made before the model loaded"]).then(
      () => "resolved",
      (err: unknown) => String(err),
    );
    await raw.close();
    expect(await pending).toContain("closed");
  }, 60_000);

  it("closing the pool mid-upload settles every call, whatever ran", async () => {
    const raw = openOnnxEmbedder({ modelDir, workers: 2, intraOpThreads: 1 });
    await raw.ready();
    const pool = new FairEmbedder(raw, { slots: 2 });
    const texts = Array.from({ length: 48 }, (_, i) => `chunk ${i} `.repeat(10 + (i % 20)));
    const calls = [pool.embed("a", texts), pool.embed("b", ["a query"], undefined, "query"), raw.embed(texts.slice(0, 4))];
    const settled = Promise.allSettled(calls);
    await pool.close();
    const out = await settled;
    for (const o of out) {
      if (o.status === "rejected") expect(String(o.reason)).toContain("closed");
      else expect(o.value[0].length).toBe(384);
    }
  }, 60_000);
});
