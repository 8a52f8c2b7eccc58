/** Per-principal quotas (ACMS_QUOTA_*). */
export interface QuotaLimits {
  /** Calls in flight at once (streams count until they end). */
  concurrent: number;
  /** Sustained calls per second. */
  ratePerSecond: number;
  /** Calls that may arrive at once above the sustained rate. */
  burst: number;
  /** Per-call cost budget: bytes of response messages. */
  resultBytes: number;
  /** Per-call cost budget: rows (entries of a response's lists, or messages of a stream). */
  resultRows: number;
  /** Per-call cost budget: running time, in ms (past it: DEADLINE_EXCEEDED). */
  callMs: number;
}

/** The defaults: generous enough for one busy agent, so only abuse meets them. */
export const DEFAULT_QUOTA_LIMITS: QuotaLimits = {
  concurrent: 1024,
  ratePerSecond: 1000,
  burst: 2000,
  resultBytes: 64 * 1024 * 1024,
  resultRows: 50_000,
  callMs: 60_000,
};

/** A refusal: why, and when a retry may succeed. */
export interface QuotaRefusal {
  reason: string;
  retryAfterMs: number;
}

interface Account {
  inFlight: number;
  tokens: number;
  refilledAt: number;
}

/**
 * The concurrency counters and rate buckets of every principal, kept apart so one principal's calls never
 * spend another's quota. The rate is a token bucket: `burst` tokens, refilled at `ratePerSecond`.
 */
export class QuotaLedger {
  private readonly accounts = new Map<string, Account>();

  constructor(
    readonly limits: QuotaLimits,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Admits one call of `principal`, returning its release function, or a refusal. */
  admit(principal: string): { release: () => void } | QuotaRefusal {
    const t = this.now();
    let a = this.accounts.get(principal);
    if (!a) {
      a = { inFlight: 0, tokens: this.limits.burst, refilledAt: t };
      this.accounts.set(principal, a);
    }
    a.tokens = Math.min(this.limits.burst, a.tokens + ((t - a.refilledAt) / 1000) * this.limits.ratePerSecond);
    a.refilledAt = t;
    if (a.inFlight >= this.limits.concurrent) {
      return { reason: `more than ${this.limits.concurrent} calls in flight`, retryAfterMs: 100 };
    }
    if (a.tokens < 1) {
      return {
        reason: `more than ${this.limits.ratePerSecond} calls per second (burst ${this.limits.burst})`,
        retryAfterMs: Math.ceil(((1 - a.tokens) / this.limits.ratePerSecond) * 1000),
      };
    }
    a.tokens -= 1;
    a.inFlight += 1;
    const account = a;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        account.inFlight -= 1;
      },
    };
  }
}
