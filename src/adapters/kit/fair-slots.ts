import { DeadlineExceededError, ResourceExhaustedError, UnavailableError } from "../../domain/errors.js";
import { FairQueue, nextPreemption } from "../../domain/fair-queue.js";

/** Options of a fair pool of slots. */
export interface FairSlotsOptions {
  /** Tasks that run at once; more wait, each tenant in its own queue. */
  slots: number;
  /** How long a task may wait for a slot, in ms, before it is RESOURCE_EXHAUSTED (it never started). */
  queueTimeoutMs: number;
  /** The most tasks one tenant may have waiting; one more is RESOURCE_EXHAUSTED at once. */
  maxQueuedPerTenant: number;
  /** The slice, in ms: a task that has run this long may be preempted for a tenant that has waited this long. */
  sliceMs: number;
  /** What a task is called in messages ("graph query"). */
  what: string;
  /**
   * For an engine that may go on working on a task after it was stopped (an HTTP endpoint that does not
   * always notice its client left): an attempt stopped before it answered still counts against its tenant
   * until its time limit plus `lingerMs` after it started (when the engine's own limit, handed to it with
   * the task, has surely ended it), and a tenant starts no attempt while its running and lingering ones
   * fill every slot. So stopping (preemption, cancellation) never lets a tenant keep more than `slots`
   * tasks on the engine. Undefined: a stopped attempt is gone at once (a terminated worker).
   */
  lingerMs?: number;
}

/** What a running attempt of a task is handed: its abort signal (preemption, time limit, the caller's cancel) and its deadline. */
export interface SlotAttempt {
  signal: AbortSignal;
  /** When this attempt's time limit ends (ms since the epoch). */
  deadline: number;
  /** The attempt's time limit in ms (the task's own). */
  timeoutMs: number;
}

/** A task's wish to run: who asks, its time limit once running, and the caller's cancellation. */
export interface SlotRequest {
  tenant: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

interface Job {
  tenant: string;
  timeoutMs: number;
  signal?: AbortSignal;
  onAbort?: () => void;
  run(attempt: SlotAttempt): Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
  /** The running attempt's controller; undefined while waiting. */
  attempt?: AbortController;
  queuedAt: number;
  startedAt?: number;
  preempted?: boolean;
  settled?: boolean;
}

/** Why an attempt was stopped for another tenant (never seen by a caller: the task runs again). */
class Preempted extends Error {}

function abortReason(signal: AbortSignal, what: string): Error {
  return signal.reason instanceof Error ? signal.reason : new UnavailableError(`the ${what} was cancelled`);
}

/**
 * A fair pool of slots for tasks that can be stopped (API.md, "Shared pools"): at most `slots` tasks run at
 * once, the waiting ones in one queue per tenant (`FairQueue`: a free slot goes to the waiting tenant holding
 * the fewest, served longest ago among equals). Dispatch alone cannot keep a tenant that arrived first from
 * holding every slot with slow tasks, so a running task can be preempted, by the rule the embedded graph
 * pool follows (`OxigraphGraphBackend`): when tenant W has had a task waiting for a slice and tenant T holds
 * every slot or at least two more than W, T's most recently started task (never its longest-running one;
 * alone on a pool of one slot, at most once) is stopped once it has run a slice: its attempt's signal is
 * aborted, its slot goes to W, and it waits again at the head of T's queue, to run again with its full
 * time limit (the stopped attempt's work is lost). A task's time limit counts from when it takes a slot
 * (DEADLINE_EXCEEDED at its end); waiting is bounded apart (RESOURCE_EXHAUSTED with a retry delay).
 *
 * The task must stop its work when the attempt's signal aborts (the slot is reused at once, whether or not
 * the task has settled yet); what an attempt answers after it was stopped is ignored. An engine that may go
 * on working on a stopped task sets `lingerMs`: the stopped attempt then counts against its tenant (never
 * another) until the engine's own limit has surely ended it.
 */
export class FairSlots {
  private readonly queue = new FairQueue<Job>();
  private readonly running = new Set<Job>();
  /** Stopped attempts the engine may still be working on (`lingerMs`): their tenant, and until when (`performance.now()`). */
  private lingering: { tenant: string; until: number }[] = [];
  private lingerTimer: NodeJS.Timeout | undefined;
  private preemptTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Attempts stopped for another tenant (tests and benches read it). */
  preemptions = 0;

  constructor(private readonly opts: FairSlotsOptions) {}

  /** Runs `task` in a slot, when its tenant's turn comes; rejects as described above. */
  run<T>(req: SlotRequest, task: (attempt: SlotAttempt) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new UnavailableError(`the ${this.opts.what} pool is closed`));
    const signal = req.signal;
    if (signal?.aborted) return Promise.reject(abortReason(signal, this.opts.what));
    if (this.queue.waiting(req.tenant) >= this.opts.maxQueuedPerTenant) {
      return Promise.reject(
        new ResourceExhaustedError(
          `more than ${this.opts.maxQueuedPerTenant} ${this.opts.what}s of this caller are waiting; retry when some have answered`,
          1000,
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        tenant: req.tenant,
        timeoutMs: req.timeoutMs,
        signal,
        run: task,
        resolve: resolve as (v: unknown) => void,
        reject,
        queuedAt: 0,
      };
      this.startWaiting(job);
      if (signal) {
        job.onAbort = () => this.settle(job, abortReason(signal, this.opts.what));
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.queue.push(job.tenant, job);
      this.dispatch();
    });
  }

  /** Tasks running now. */
  get active(): number {
    return this.running.size;
  }

  /** Stops every task, running or waiting, with `err`; later `run`s are refused. */
  close(err: Error = new UnavailableError(`the ${this.opts.what} pool is closed`)): void {
    this.closed = true;
    clearTimeout(this.preemptTimer);
    clearTimeout(this.lingerTimer);
    for (const job of [...this.running, ...this.queue.drain()]) this.settle(job, err);
  }

  private startWaiting(job: Job): void {
    job.queuedAt = performance.now();
    job.timer = setTimeout(
      () =>
        this.settle(
          job,
          new ResourceExhaustedError(
            `the ${this.opts.what} waited ${this.opts.queueTimeoutMs} ms for its turn without starting (the engine is busy)`,
            1000,
          ),
        ),
      this.opts.queueTimeoutMs,
    );
  }

  /** Ends a job for good: answered, failed, timed out or cancelled; a running one frees its slot and its attempt is stopped. */
  private settle(job: Job, err: Error | undefined, value?: unknown): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.timer);
    if (job.signal && job.onAbort) job.signal.removeEventListener("abort", job.onAbort);
    // A running attempt still set was stopped here (a time limit, a cancel, close): its work may go on.
    const attempt = job.attempt;
    job.attempt = undefined;
    if (this.running.delete(job)) {
      if (err && attempt) this.stop(job, attempt, err);
    } else this.queue.remove(job.tenant, job);
    if (err) job.reject(err);
    else job.resolve(value);
    this.dispatch();
  }

  /** The running tasks of each tenant, the longest-running first. */
  private byTenant(): Map<string, Job[]> {
    const map = new Map<string, Job[]>();
    for (const job of this.running) {
      const jobs = map.get(job.tenant);
      if (jobs) jobs.push(job);
      else map.set(job.tenant, [job]);
    }
    for (const jobs of map.values()) jobs.sort((x, y) => (x.startedAt ?? 0) - (y.startedAt ?? 0));
    return map;
  }

  /** Aborts a running attempt; with `lingerMs`, it counts against its tenant until the engine's own limit has ended it. */
  private stop(job: Job, attempt: AbortController, reason: Error): void {
    attempt.abort(reason);
    if (this.opts.lingerMs === undefined || job.startedAt === undefined) return;
    this.lingering.push({ tenant: job.tenant, until: job.startedAt + job.timeoutMs + this.opts.lingerMs });
  }

  /** Lingering attempts per tenant (expired ones dropped), and a wake-up when the next one expires. */
  private lingeringByTenant(): Map<string, number> {
    const now = performance.now();
    this.lingering = this.lingering.filter((l) => l.until > now);
    const map = new Map<string, number>();
    for (const l of this.lingering) map.set(l.tenant, (map.get(l.tenant) ?? 0) + 1);
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    if (this.lingering.length > 0 && this.queue.size > 0 && !this.closed) {
      const next = Math.min(...this.lingering.map((l) => l.until));
      this.lingerTimer = setTimeout(() => this.dispatch(), Math.max(1, Math.ceil(next - now)));
      this.lingerTimer.unref();
    }
    return map;
  }

  private dispatch(): void {
    if (this.closed) return;
    const running = this.byTenant();
    const lingering = this.lingeringByTenant();
    // A tenant's running and lingering attempts: it is served after those holding fewer, and not at all
    // while they fill every slot (Infinity: FairQueue then serves any tenant with a finite count first).
    const held = (tenant: string) => {
      const n = (running.get(tenant)?.length ?? 0) + (lingering.get(tenant) ?? 0);
      return n >= this.opts.slots ? Infinity : n;
    };
    while (this.running.size < this.opts.slots && this.queue.size > 0) {
      if (![...this.queue.heads()].some(([tenant]) => held(tenant) < Infinity)) break;
      const job = this.queue.shift(held) as Job;
      const jobs = running.get(job.tenant);
      if (jobs) jobs.push(job);
      else running.set(job.tenant, [job]);
      this.start(job);
    }
    this.scheduleRebalance(running, held);
  }

  private start(job: Job): void {
    const attempt = new AbortController();
    job.attempt = attempt;
    job.startedAt = performance.now();
    this.running.add(job);
    clearTimeout(job.timer);
    job.timer = setTimeout(
      () => this.settle(job, new DeadlineExceededError(`the ${this.opts.what} ran past its time limit of ${job.timeoutMs} ms`)),
      job.timeoutMs,
    );
    let work: Promise<unknown>;
    try {
      work = job.run({ signal: attempt.signal, deadline: Date.now() + job.timeoutMs, timeoutMs: job.timeoutMs });
    } catch (err) {
      work = Promise.reject(err);
    }
    work.then(
      (value) => {
        if (job.attempt !== attempt) return;
        job.attempt = undefined;
        this.settle(job, undefined, value);
      },
      (err: unknown) => {
        // A stopped attempt (preempted, or the job already settled) answers nothing.
        if (job.attempt !== attempt || attempt.signal.aborted) return;
        job.attempt = undefined;
        this.settle(job, err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  /** See the class comment: preempts one task when a waiting tenant is due, else wakes when the next one will be. */
  private scheduleRebalance(running: Map<string, Job[]>, held: (tenant: string) => number): void {
    clearTimeout(this.preemptTimer);
    this.preemptTimer = undefined;
    if (this.closed || this.queue.size === 0 || running.size === 0) return;
    const now = performance.now();
    const step = nextPreemption(this.queue.heads(), running, held, this.opts.slots, this.opts.sliceMs, now);
    if (step && "victim" in step) this.preempt(step.victim);
    else if (step) {
      this.preemptTimer = setTimeout(() => this.dispatch(), Math.max(1, Math.ceil(step.at - now)));
      this.preemptTimer.unref();
    }
  }

  private preempt(job: Job): void {
    this.running.delete(job);
    job.preempted = true;
    this.preemptions += 1;
    const attempt = job.attempt as AbortController;
    this.stop(job, attempt, new Preempted(`the ${this.opts.what} was stopped for another caller's turn`));
    job.attempt = undefined;
    clearTimeout(job.timer);
    this.startWaiting(job);
    this.queue.unshift(job.tenant, job);
    this.dispatch();
  }
}
