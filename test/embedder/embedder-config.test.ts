import { loadConfig } from "../../src/server/composition/config.js";

// ACMS_EMBED_MODEL_DIR / ACMS_EMBEDDINGS_URL as docs/embeddings.md lists them: one embedder at most, and a bad
// setting stops the start with a one-line reason (the key never echoed).

describe("embedder config", () => {
  it("has none by default: everything as before", () => {
    expect(loadConfig({}).embedder).toBeUndefined();
  });

  it("reads the in-process model and the HTTP endpoint with their defaults", () => {
    expect(loadConfig({ ACMS_EMBED_MODEL_DIR: "/models/m" }).embedder).toEqual({
      kind: "onnx",
      modelDir: "/models/m",
      workers: 1,
      threads: undefined,
      batch: 16,
      sliceMs: 100,
      queryWorkers: 0,
    });
    expect(
      loadConfig({ ACMS_EMBEDDINGS_URL: "http://127.0.0.1:11434/v1", ACMS_EMBEDDINGS_MODEL: "all-minilm", ACMS_EMBEDDINGS_API_KEY: "k" })
        .embedder,
    ).toEqual({
      kind: "http",
      url: "http://127.0.0.1:11434/v1",
      model: "all-minilm",
      apiKey: "k",
      timeoutMs: 30000,
      concurrency: 2,
      batch: 64,
      sliceMs: 100,
      queryWorkers: 0,
    });
  });

  it("refuses two embedders, a URL without a model, a model without a URL, and credentials in the URL", () => {
    expect(() => loadConfig({ ACMS_EMBED_MODEL_DIR: "/m", ACMS_EMBEDDINGS_URL: "http://h/v1", ACMS_EMBEDDINGS_MODEL: "x" })).toThrow(
      "ACMS_EMBED_MODEL_DIR and ACMS_EMBEDDINGS_URL both name an embedder",
    );
    expect(() => loadConfig({ ACMS_EMBEDDINGS_URL: "http://h/v1" })).toThrow("ACMS_EMBEDDINGS_MODEL must be set");
    expect(() => loadConfig({ ACMS_EMBEDDINGS_MODEL: "x" })).toThrow("ACMS_EMBEDDINGS_MODEL is set but ACMS_EMBEDDINGS_URL is not");
    let message = "";
    try {
      loadConfig({ ACMS_EMBEDDINGS_URL: "http://user:sekret@h/v1", ACMS_EMBEDDINGS_MODEL: "x" });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("set ACMS_EMBEDDINGS_API_KEY");
    expect(message).not.toContain("sekret");
    expect(() => loadConfig({ ACMS_EMBED_MODEL_DIR: "/m", ACMS_EMBED_WORKERS: "0" })).toThrow(
      "ACMS_EMBED_WORKERS must be between 1 and 64",
    );
  });
});
