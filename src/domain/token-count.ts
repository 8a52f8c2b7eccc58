import { countTokens as countWithTokenizer, decode, encode } from "gpt-tokenizer";

/** Special-token markers (`<|endoftext|>` ...) in stored text are ordinary text here, never control tokens. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Tokens in `text` as a GPT model counts them (gpt-tokenizer, o200k_base): the unit of the hot tier's
 * budget, so a budget of 8000 means what an agent's context window means by it.
 * @example countTokens("hello world") // 2
 */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return countWithTokenizer(text, AS_TEXT);
}

/**
 * The longest prefix of `text` that holds at most `maxTokens` tokens, cut back to a whitespace boundary
 * when one exists, so a truncated summary never ends inside a word or a multi-byte character.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return "";
  const tokens = encode(text, AS_TEXT);
  if (tokens.length <= maxTokens) return text;
  let n = maxTokens;
  while (n > 0) {
    let prefix = decode(tokens.slice(0, n)).replace(/\uFFFD+$/u, "");
    const lastSpace = prefix.search(/\s\S*$/u);
    if (lastSpace > 0) prefix = prefix.slice(0, lastSpace);
    prefix = prefix.trimEnd();
    if (prefix.length > 0 && countTokens(prefix) <= maxTokens) return prefix;
    n -= 1;
  }
  return "";
}
