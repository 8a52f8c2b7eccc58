/**
 * Puts a streamed scoped answer's identity in its response headers: the stream's messages carry one
 * result each, so `acms-scope-id`, `acms-exhaustive` and `acms-index-generation` are where a streaming
 * client reads what the unary responses carry as `scope_id`, `exhaustive` and `index_generation`
 * (API.md: every scoped response carries them). Set before the first message is sent.
 */
export function setStreamAnswerHeaders(headers: Headers, scopeId: string, exhaustive: boolean, indexGeneration: bigint): void {
  headers.set("acms-scope-id", scopeId);
  headers.set("acms-exhaustive", String(exhaustive));
  headers.set("acms-index-generation", String(indexGeneration));
}
