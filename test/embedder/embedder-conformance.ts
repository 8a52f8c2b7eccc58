import { InvalidArgumentError } from "../../src/domain/errors.js";
import type { Embedder } from "../../src/ports/embedder.js";
import { conformanceSuite, type ConformanceOptions } from "../support/conformance-suite.js";

/** What the embedder suite needs of one adapter. */
export interface EmbedderSuiteOptions extends ConformanceOptions {
  /** A fresh embedder of the model under test (closed by the suite). */
  create(): Promise<Embedder>;
  /** The model's dimension. */
  dimension: number;
}

const TEXTS = [
  "The cat sat on the mat.",
  "A feline rested on the rug.",
  "Quarterly revenue grew by twelve percent.",
  "How do I rotate the API keys of a deployment?",
  "naïve café – déjà vu, 東京 and emoji 🚀",
];

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/**
 * The one suite every Embedder adapter passes (src/ports/embedder.ts): unit vectors of the model's
 * dimension, in input order; a batch equal to one-by-one within float tolerance; deterministic; paraphrases
 * nearer than unrelated text (a real model, not noise); blank and oversize input refused naming the text;
 * a cancelled call rejects with the signal's reason.
 */
export function runEmbedderSuite(opts: EmbedderSuiteOptions): void {
  conformanceSuite("Embedder", opts, (test) => {
    let embedder: Embedder;
    beforeAll(async () => {
      embedder = await opts.create();
      expect(await embedder.ready()).toBe(opts.dimension);
    }, 120_000);
    afterAll(async () => {
      await embedder?.close();
    });

    test("same texts give unit vectors of the model's dimension, in input order, the same every time", async () => {
      const a = await embedder.embed(TEXTS);
      const b = await embedder.embed(TEXTS);
      expect(a).toHaveLength(TEXTS.length);
      a.forEach((v, i) => {
        expect(v).toBeInstanceOf(Float32Array);
        expect(v.length).toBe(opts.dimension);
        expect(Math.abs(dot(v, v) - 1)).toBeLessThan(1e-4);
        expect(dot(v, b[i])).toBeGreaterThan(0.9999);
      });
      // In order: each text's vector is its own, not its neighbour's.
      const [first] = await embedder.embed([TEXTS[2]]);
      expect(dot(first, a[2])).toBeGreaterThan(0.9999);
      expect(dot(first, a[0])).toBeLessThan(0.9);
    });

    test("a batch gives what the texts give one by one", async () => {
      const batch = await embedder.embed(TEXTS);
      for (let i = 0; i < TEXTS.length; i++) {
        const [one] = await embedder.embed([TEXTS[i]]);
        expect(dot(one, batch[i])).toBeGreaterThan(0.9999);
      }
    });

    test("a paraphrase is nearer than unrelated text (a real sentence model)", async () => {
      const [cat, feline, revenue] = await embedder.embed(TEXTS.slice(0, 3));
      expect(dot(cat, feline)).toBeGreaterThan(dot(cat, revenue) + 0.2);
    });

    test("a long text is embedded from its head (the model reads a bounded number of word pieces)", async () => {
      const long = `${TEXTS[3]} ${"padding words that go on ".repeat(300)}`;
      const [v] = await embedder.embed([long]);
      expect(v.length).toBe(opts.dimension);
      expect(Math.abs(dot(v, v) - 1)).toBeLessThan(1e-4);
    });

    test("blank and oversize texts are refused with INVALID_ARGUMENT naming the text", async () => {
      const blank = embedder.embed(["fine", "  "]);
      await expect(blank).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(blank).rejects.toMatchObject({ violations: [{ field: "texts[1]" }] });
      const huge = "x".repeat(embedder.maxInputChars + 1);
      await expect(embedder.embed([huge])).rejects.toMatchObject({ violations: [{ field: "texts[0]" }] });
      const tooMany = Array.from({ length: embedder.maxBatch + 1 }, () => "a");
      await expect(embedder.embed(tooMany)).rejects.toMatchObject({ violations: [{ field: "texts" }] });
      expect(await embedder.embed([])).toEqual([]);
    });

    test("a cancelled call rejects with the signal's reason, and the embedder goes on serving", async () => {
      const before = new AbortController();
      before.abort(new Error("cancelled before"));
      await expect(embedder.embed(TEXTS, before.signal)).rejects.toThrow("cancelled before");
      const during = new AbortController();
      const pending = embedder.embed(
        Array.from({ length: embedder.maxBatch }, (_, i) => `${TEXTS[i % TEXTS.length]} ${i}`),
        during.signal,
      );
      during.abort(new Error("cancelled during"));
      await expect(pending).rejects.toThrow("cancelled during");
      const [v] = await embedder.embed([TEXTS[0]]);
      expect(v.length).toBe(opts.dimension);
    });
  });
}
