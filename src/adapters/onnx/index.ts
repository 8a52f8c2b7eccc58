import { OnnxEmbedder, type OnnxEmbedderOptions } from "./onnx-embedder.js";

export { DEFAULT_MAX_TOKENS, findModelFiles, OnnxEmbedder, type OnnxEmbedderOptions } from "./onnx-embedder.js";

/** The in-process embedder over a local ONNX sentence model (ACMS_EMBED_MODEL_DIR); see OnnxEmbedder. */
export function openOnnxEmbedder(opts: OnnxEmbedderOptions): OnnxEmbedder {
  return new OnnxEmbedder(opts);
}
