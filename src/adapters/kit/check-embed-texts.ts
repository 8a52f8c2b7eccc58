import { InvalidArgumentError, type FieldViolation } from "../../domain/errors.js";

/**
 * The shared input rule of every embedder (see the port): at most `maxBatch` texts, none blank, none over
 * `maxInputChars`; every problem named at once as `texts[i]`.
 */
export function checkEmbedTexts(texts: readonly string[], maxBatch: number, maxInputChars: number): void {
  if (texts.length > maxBatch) throw InvalidArgumentError.field("texts", `must be at most ${maxBatch} texts per call, got ${texts.length}`);
  const violations: FieldViolation[] = [];
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i];
    if (t.trim().length === 0) violations.push({ field: `texts[${i}]`, description: "must not be empty" });
    else if (t.length > maxInputChars)
      violations.push({ field: `texts[${i}]`, description: `must be at most ${maxInputChars} characters, got ${t.length}` });
  }
  if (violations.length > 0) throw new InvalidArgumentError(violations);
}
