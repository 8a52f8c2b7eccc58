import { OpenAiEmbedder, type OpenAiEmbedderOptions } from "./openai-embedder.js";

export { OpenAiEmbedder, parseRetryAfter, type OpenAiEmbedderOptions } from "./openai-embedder.js";

/** The embedder over an OpenAI-compatible `POST {url}/embeddings` endpoint (ACMS_EMBEDDINGS_URL); see OpenAiEmbedder. */
export function openOpenAiEmbedder(opts: OpenAiEmbedderOptions): OpenAiEmbedder {
  return new OpenAiEmbedder(opts);
}
