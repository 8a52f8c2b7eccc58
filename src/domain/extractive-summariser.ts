import { countTokens, truncateToTokens } from "./token-count.js";

/**
 * Makes the summary a fragment carries into cold: at most `targetTokens` tokens of `content`.
 * Pluggable (an LLM call fits the signature); the service trims any longer answer to the target.
 */
export type Summariser = (content: string, targetTokens: number) => string | Promise<string>;

const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have he her his i if in into is it its " +
    "may me more most my no not of on or our she should so than that the their them then there these they this those to " +
    "too us was we were what when where which while who why will with would you your"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}]+/gu;

function splitSentences(content: string): string[] {
  return content
    .split(/(?<=[.!?])\s+|\n\s*\n|\n(?=\s*[-*•\d])/u)
    .map((s) => s.replace(/\s+/gu, " ").trim())
    .filter((s) => s.length > 0);
}

function contentWords(sentence: string): string[] {
  return (sentence.toLowerCase().match(WORD) ?? []).filter((w) => !STOPWORDS.has(w) && w.length > 1);
}

/**
 * The default summariser: extractive and deterministic (the same content and target always give the same
 * summary, so a restart or a replica never disagrees). Sentences are scored by how frequent their content
 * words are in the whole fragment (Luhn's idea, normalised by the square root of the sentence length), the
 * first sentence gets a small lead bonus, and the best sentences that fit the token target are kept in
 * their original order. Content already within the target is kept whole; a first sentence too long to fit
 * alone is cut at a word boundary.
 * @example extractiveSummary(longNotes, 128) // at most 128 tokens of the notes' key sentences
 */
export function extractiveSummary(content: string, targetTokens: number): string {
  const text = content.trim();
  if (text.length === 0 || targetTokens <= 0) return "";
  if (countTokens(text) <= targetTokens) return text;
  const sentences = splitSentences(text);
  const frequency = new Map<string, number>();
  const wordsOf = sentences.map(contentWords);
  for (const words of wordsOf) for (const w of words) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  const ranked = sentences
    .map((sentence, index) => {
      const words = wordsOf[index];
      const sum = words.reduce((acc, w) => acc + (frequency.get(w) ?? 0), 0);
      const score = (words.length === 0 ? 0 : sum / Math.sqrt(words.length)) * (index === 0 ? 1.25 : 1);
      return { sentence, index, score, tokens: countTokens(sentence) };
    })
    .sort((a, b) => b.score - a.score || a.index - b.index);
  const chosen: typeof ranked = [];
  let budget = targetTokens;
  for (const r of ranked) {
    // +1 for the separating space, which may or may not merge into a token: checked exactly below.
    if (r.tokens + 1 <= budget) {
      chosen.push(r);
      budget -= r.tokens + 1;
    }
  }
  if (chosen.length === 0) return truncateToTokens(ranked[0].sentence, targetTokens);
  chosen.sort((a, b) => a.index - b.index);
  let summary = chosen.map((c) => c.sentence).join(" ");
  while (countTokens(summary) > targetTokens && chosen.length > 1) {
    let worst = 0;
    for (let i = 1; i < chosen.length; i++) {
      if (chosen[i].score < chosen[worst].score || (chosen[i].score === chosen[worst].score && chosen[i].index > chosen[worst].index))
        worst = i;
    }
    chosen.splice(worst, 1);
    summary = chosen.map((c) => c.sentence).join(" ");
  }
  return countTokens(summary) <= targetTokens ? summary : truncateToTokens(summary, targetTokens);
}
