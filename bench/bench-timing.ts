/**
 * Timing and summary helpers every benchmark shares, so figures from different areas are taken and
 * summarised alike (latencies in milliseconds from `performance.now()`).
 */

/** Times `fn(i)` for i in 0..count-1, `rounds` times over (round by round), and returns every latency. */
export async function sampleTimes(rounds: number, count: number, fn: (i: number) => unknown): Promise<number[]> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      await fn(i);
      times.push(performance.now() - t0);
    }
  }
  return times;
}

/** The median (the upper one for an even count): robust to a shared machine's stalls. */
export function median(xs: readonly number[]): number {
  return percentile(xs, 0.5);
}

/** The `p`-quantile (0..1) by the nearest-rank rule. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

/** The arithmetic mean. */
export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** A latency for a table: milliseconds from 1 ms up, microseconds (with `microDigits` decimals) below. */
export function formatMs(ms: number, microDigits = 0): string {
  return ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(microDigits)} µs`;
}
