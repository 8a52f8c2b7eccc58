/**
 * The deadlines a request body must meet while the server waits for it (issue 24, finding 3):
 * - a stall deadline: no bytes for `stallMs` while the server waits, and the body is abandoned;
 * - a minimum data rate for a single-message body (unary and server-streaming calls): once the server has
 *   waited `graceMs` in all, the body must have averaged `minBytesPerSecond` over the time waited, else it
 *   is abandoned. A body that trickles a byte just inside the stall deadline would otherwise hold its
 *   connection for as long as its sender likes (ASP.NET Core's Kestrel has the same rule,
 *   MinRequestBodyDataRate, 240 bytes/s after a 5 s grace; and, like it, leaves client streams to the stall
 *   deadline alone: a client stream may pause between messages by design).
 * Only the server's waits count, never the time it spends on what it has read (its own backpressure).
 */

/** What a body that misses a deadline is told, and why. */
export interface BodyDeadlineMiss {
  reason: "stalled" | "too-slow";
  message: string;
}

/** The deadlines of one request body. */
export interface BodyDeadlineOptions {
  /** No bytes for this long while waiting: abandoned (ms). */
  stallMs: number;
  /** The minimum average rate once `graceMs` of waiting has passed (bytes/s); 0: no rate rule. */
  minBytesPerSecond: number;
  /** The waiting time before the rate rule applies (ms). */
  graceMs: number;
}

/** How often the rate rule is checked while the server waits (ms). */
const RATE_CHECK_MS = 250;

/**
 * Tracks one body: call `waiting()` when the server starts waiting for bytes, `received(n)` when bytes arrive,
 * `stop()` when the body is complete or the call ends. `onMiss` runs at most once.
 * One timer a body, armed when the server first waits and left running while bytes come and go: when it fires
 * it checks the rules against the time actually waited and re-arms for the next moment one could be missed
 * (a unary call's body arrives in one chunk, and two timers set and cleared per wait cost more than its read).
 * @example const d = new BodyDeadline({ stallMs: 30_000, minBytesPerSecond: 240, graceMs: 30_000 }, miss => reset(miss));
 */
export class BodyDeadline {
  private bytes = 0;
  private waitedMs = 0;
  private waitStart: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private done = false;

  constructor(
    private readonly opts: BodyDeadlineOptions,
    private readonly onMiss: (miss: BodyDeadlineMiss) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The server now waits for the next bytes. */
  waiting(): void {
    if (this.done || this.waitStart !== undefined) return;
    this.waitStart = this.now();
    if (this.timer === undefined) this.arm();
  }

  /** `n` bytes arrived; the server stops waiting until `waiting()` again. */
  received(n: number): void {
    this.bytes += n;
    this.pause();
    // A chunk can arrive after the grace with too few bytes in all: checked here too, not only on the timer.
    if (!this.done) this.checkRate();
  }

  /** The body is complete (or the call ended): no deadline applies any more. */
  stop(): void {
    this.done = true;
    this.pause();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private pause(): void {
    if (this.waitStart !== undefined) this.waitedMs += this.now() - this.waitStart;
    this.waitStart = undefined;
  }

  /** Sets the timer for the next moment a rule could be missed (the server is waiting). */
  private arm(): void {
    const { stallMs, minBytesPerSecond, graceMs } = this.opts;
    const waitStart = this.waitStart!;
    const now = this.now();
    let delay = waitStart + stallMs - now;
    if (minBytesPerSecond > 0) {
      const waited = this.waitedMs + (now - waitStart);
      // Past the grace the rate is checked every RATE_CHECK_MS; before it, just after it ends.
      delay = Math.min(delay, waited > graceMs ? RATE_CHECK_MS : graceMs - waited + 1);
    }
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(delay)));
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    // Not waiting (the server is busy with what it read): nothing can be missed until it waits again.
    if (this.done || this.waitStart === undefined) return;
    if (this.now() - this.waitStart >= this.opts.stallMs) {
      this.miss({ reason: "stalled", message: `the request body stalled: no bytes for ${this.opts.stallMs} ms` });
      return;
    }
    this.checkRate();
    if (!this.done) this.arm();
  };

  private checkRate(): void {
    const { minBytesPerSecond, graceMs } = this.opts;
    if (minBytesPerSecond <= 0) return;
    const waited = this.waitedMs + (this.waitStart === undefined ? 0 : this.now() - this.waitStart);
    if (waited <= graceMs) return;
    if (this.bytes >= (minBytesPerSecond * waited) / 1000) return;
    const rate = Math.round((this.bytes * 1000) / waited);
    this.miss({
      reason: "too-slow",
      message: `the request body arrived too slowly: ${rate} bytes/s over ${Math.round(waited)} ms, under the minimum of ${minBytesPerSecond}`,
    });
  }

  private miss(m: BodyDeadlineMiss): void {
    if (this.done) return;
    this.stop();
    this.onMiss(m);
  }
}
