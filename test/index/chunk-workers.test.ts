import { getEventListeners } from "node:events";
import { ChunkWorkers, CHUNK_TASK_CHARS } from "../../src/adapters/kit/chunk-workers.js";
import { chunkText, DEFAULT_CHUNKING } from "../../src/domain/chunking.js";
import { CHUNK_INLINE_MAX_CHARS, validateUpsertMessage } from "../../src/application/indexing/upsert-validation.js";
import { prng } from "../support/prng.js";

/**
 * Server-side chunking off the serving thread (ChunkWorkers): the threads run the server's own chunker, so
 * every text gives exactly chunkText's chunks; tenants share the threads fairly; the serving thread stays
 * free while a large document is chunked.
 */
function words(rand: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`w${Math.floor(rand() * 1e9).toString(36)}`);
  return out.join(rand() < 0.5 ? " " : "\n");
}

let pool: ChunkWorkers;
beforeEach(() => {
  pool = new ChunkWorkers(2);
});
afterEach(async () => {
  await pool.close();
});

describe("ChunkWorkers", () => {
  it("gives every text exactly chunkText's chunks, whatever the text (and many texts cut into tasks)", async () => {
    const rand = prng(3);
    const texts = [
      "one short line",
      "Special tokens are plain text here: <|endoftext|> and <|im_start|>.",
      "日本語のテキストは空白なしで長く続く".repeat(300),
      "emoji 🤖🧠 and accents: déjà vu, naïve café ".repeat(200),
      words(rand, 30_000),
      ...Array.from({ length: 20 }, (_, i) => words(rand, 200 + i * 300)),
    ];
    expect(texts.reduce((n, t) => n + t.length, 0)).toBeGreaterThan(2 * CHUNK_TASK_CHARS);
    const got = await pool.chunk("tenant-a", texts, DEFAULT_CHUNKING);
    expect(got).toEqual(texts.map((t) => chunkText(t, DEFAULT_CHUNKING)));
    const small = { chunkTokens: 16, overlapTokens: 4 };
    expect(await pool.chunk("tenant-a", texts.slice(0, 5), small)).toEqual(texts.slice(0, 5).map((t) => chunkText(t, small)));
    expect(pool.started).toBe(2);
  });

  it("serves a tenant that arrives behind another's backlog before the rest of that backlog", async () => {
    const rand = prng(4);
    const big = Array.from({ length: 8 }, () => words(rand, 8_000));
    const order: string[] = [];
    const flood = big.map((t, i) => pool.chunk("flooder", [t], DEFAULT_CHUNKING).then(() => order.push(`flooder-${i}`)));
    const small = pool.chunk("other", ["a small document"], DEFAULT_CHUNKING).then(() => order.push("other"));
    await Promise.all([...flood, small]);
    // Two threads: the flooder's first two tasks are running when the other tenant arrives; it goes next.
    expect(order.indexOf("other")).toBeLessThanOrEqual(2);
  });

  it("refuses a call once its signal aborts, and after close", async () => {
    const rand = prng(5);
    const ac = new AbortController();
    const texts = Array.from({ length: 20 }, () => words(rand, 20_000));
    const call = pool.chunk("t", texts, DEFAULT_CHUNKING, ac.signal);
    ac.abort(new Error("caller went away"));
    await expect(call).rejects.toThrow("caller went away");
    await pool.close();
    await expect(pool.chunk("t", ["x"], DEFAULT_CHUNKING)).rejects.toThrow("closed");
  });

  it("leaves no listener on a signal its calls shared, however they ended", async () => {
    const rand = prng(6);
    const stream = new AbortController();
    // One stream's signal over many calls (one a message), as an upload's validation makes them.
    for (let i = 0; i < 30; i++) await pool.chunk("t", [words(rand, 50)], DEFAULT_CHUNKING, stream.signal);
    expect(getEventListeners(stream.signal, "abort")).toHaveLength(0);
    // A call refused by its own signal, and one failed by close, leave none either.
    const own = new AbortController();
    const refused = pool.chunk("t", [words(rand, 20_000)], DEFAULT_CHUNKING, own.signal);
    own.abort(new Error("gone"));
    await expect(refused).rejects.toThrow("gone");
    expect(getEventListeners(own.signal, "abort")).toHaveLength(0);
    const closing = expect(pool.chunk("t", [words(rand, 20_000)], DEFAULT_CHUNKING, stream.signal)).rejects.toThrow("closed");
    await pool.close();
    await closing;
    expect(getEventListeners(stream.signal, "abort")).toHaveLength(0);
  });

  it("a thread idle for its idle time stops, and the next call starts one again", async () => {
    const brief = new ChunkWorkers(1, 20);
    try {
      expect(await brief.chunk("t", ["first"], DEFAULT_CHUNKING)).toEqual([["first"]]);
      expect(brief.started).toBe(1);
      while (brief.started > 0) await new Promise((r) => setTimeout(r, 10));
      expect(await brief.chunk("t", ["second"], DEFAULT_CHUNKING)).toEqual([["second"]]);
      expect(brief.started).toBe(1);
    } finally {
      await brief.close();
    }
  });

  it("a thread that dies fails its task, and the next call gets a new thread", async () => {
    const rand = prng(6);
    const call = pool.chunk("t", [words(rand, 100_000)], DEFAULT_CHUNKING);
    // The thread holding the task, stopped from outside (as a crash would).
    const slots = (pool as unknown as { slots: Array<{ worker: { terminate(): Promise<number> } }> }).slots;
    await slots[0].worker.terminate();
    await expect(call).rejects.toThrow("a chunking thread stopped");
    expect(await pool.chunk("t", ["still chunks"], DEFAULT_CHUNKING)).toEqual([["still chunks"]]);
  });
});

describe("upload validation with the chunking threads", () => {
  it("chunks a large document off the serving thread (the event loop keeps turning) and a small one in place, both as chunkText does", async () => {
    const rand = prng(7);
    const large = words(rand, 60_000);
    const smallDoc = "a small document of a few words";
    expect(large.length).toBeGreaterThan(CHUNK_INLINE_MAX_CHARS);
    let turns = 0;
    let counting = true;
    const tick = () => {
      turns += 1;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const docs = await validateUpsertMessage(
      {
        resourceId: "01JC0000000000000000000000",
        documents: [
          { path: "large.md", content: large, metadata: {}, chunks: [] },
          { path: "small.md", content: smallDoc, metadata: {}, chunks: [] },
        ],
      },
      { embeddingDim: 3, chunker: pool, tenant: "t" },
    );
    counting = false;
    expect(docs.map((d) => d.chunks.map((c) => c.text))).toEqual([chunkText(large), chunkText(smallDoc)]);
    // In place, the 60,000 words held the loop for one long turn; off the thread it turned throughout.
    expect(turns).toBeGreaterThan(50);
  });

  it("chunks nothing of a message that is refused", async () => {
    const calls: number[] = [];
    const spy = {
      chunk: async (_t: string, texts: readonly string[]) => (calls.push(texts.length), texts.map(() => [])),
      close: async () => {},
    };
    await expect(
      validateUpsertMessage(
        {
          resourceId: "01JC0000000000000000000000",
          documents: [
            { path: "large.md", content: "x ".repeat(CHUNK_INLINE_MAX_CHARS), metadata: {}, chunks: [] },
            { path: "../escape.md", content: "bad path", metadata: {}, chunks: [] },
          ],
        },
        { embeddingDim: 3, chunker: spy, tenant: "t" },
      ),
    ).rejects.toThrow("documents[1].path");
    expect(calls).toEqual([]);
  });
});
