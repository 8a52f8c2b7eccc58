/**
 * A queue per tenant for a shared pool (API.md, "Shared pools": the graph workers, the embedder). `shift`
 * takes the oldest entry of the tenant served longest ago (a tenant never served first: a newcomer waits
 * behind no tenant with a backlog), so one tenant's backlog delays another's next entry by at most one entry
 * per server. Given how many servers each tenant already holds, `shift` serves the tenant holding the fewest
 * first (served longest ago among equals): a tenant with entries waiting gets the next free server before
 * one that holds more.
 */
export class FairQueue<T> {
  private readonly queues = new Map<string, T[]>();
  /** Tenants with a non-empty queue, in the order they (re)joined it: the tie-break after `lastServed`. */
  private readonly order: string[] = [];
  /** When each tenant was last served (a counter); a tenant never served is not in it and comes first. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** How many entries `tenant` has waiting. */
  waiting(tenant: string): number {
    return this.queues.get(tenant)?.length ?? 0;
  }

  push(tenant: string, item: T): void {
    let q = this.queues.get(tenant);
    if (!q) {
      q = [];
      this.queues.set(tenant, q);
      this.order.push(tenant);
    }
    q.push(item);
    this.count += 1;
  }

  /**
   * Puts `item` back at the head of its tenant's queue (a preempted entry runs next of its tenant's), the
   * tenant last in the rotation: it had its turn.
   */
  unshift(tenant: string, item: T): void {
    const q = this.queues.get(tenant);
    if (q) {
      q.unshift(item);
      this.order.splice(this.order.indexOf(tenant), 1);
    } else this.queues.set(tenant, [item]);
    this.order.push(tenant);
    this.count += 1;
  }

  /** The oldest entry of each tenant with entries waiting, in serving order. */
  *heads(): IterableIterator<[string, T]> {
    for (const tenant of this.order) yield [tenant, (this.queues.get(tenant) as T[])[0]];
  }

  /**
   * The next entry: from the tenant served longest ago (never served first); with `held` (how many servers a
   * tenant holds), from the tenant holding the fewest, served longest ago among those.
   */
  shift(held?: (tenant: string) => number): T | undefined {
    let at = -1;
    let least = Infinity;
    let oldest = Infinity;
    this.order.forEach((tenant, i) => {
      const h = held ? held(tenant) : 0;
      const served = this.lastServed.get(tenant) ?? -1;
      if (h < least || (h === least && served < oldest)) {
        least = h;
        oldest = served;
        at = i;
      }
    });
    if (at < 0) return undefined;
    const tenant = this.order.splice(at, 1)[0];
    this.lastServed.set(tenant, this.served++);
    const q = this.queues.get(tenant) as T[];
    const item = q.shift() as T;
    this.count -= 1;
    if (q.length > 0) this.order.push(tenant);
    else this.queues.delete(tenant);
    return item;
  }

  /** Takes `item` out wherever it waits; false when it is not queued. */
  remove(tenant: string, item: T): boolean {
    const q = this.queues.get(tenant);
    const at = q ? q.indexOf(item) : -1;
    if (!q || at < 0) return false;
    q.splice(at, 1);
    this.count -= 1;
    if (q.length === 0) {
      this.queues.delete(tenant);
      this.order.splice(this.order.indexOf(tenant), 1);
    }
    return true;
  }

  /** Empties the queue, returning every entry. */
  drain(): T[] {
    const all = [...this.queues.values()].flat();
    this.queues.clear();
    this.order.length = 0;
    this.count = 0;
    return all;
  }
}

/** A queued task as the rebalancing rule sees it. */
export interface QueuedTask {
  queuedAt: number;
}

/** A running task as the rebalancing rule sees it. */
export interface RunningTask {
  startedAt?: number;
  preempted?: boolean;
}

/**
 * The rebalancing rule of a pool of `slots` shared by tenants (the Oxigraph worker pool, the SPARQL endpoint's
 * slots): for each tenant waiting (`heads`, its oldest queued task), the tenant holding the most of the
 * pool, if it holds every slot or two more than the waiting one (`held`; Infinity for a tenant that could not
 * take a freed slot), gives up its most recently started task (running tasks are oldest first), never its
 * longest-running one, and a lone task at most once; the task is due one slice after both the wait and its
 * start. Returns the task to preempt now, or when the next one will be due, or undefined when none will.
 */
export function nextPreemption<J extends RunningTask>(
  heads: Iterable<[string, QueuedTask]>,
  running: ReadonlyMap<string, readonly J[]>,
  held: (tenant: string) => number,
  slots: number,
  sliceMs: number,
  now: number,
): { victim: J } | { at: number } | undefined {
  let next = Infinity;
  for (const [tenant, head] of heads) {
    const mine = held(tenant);
    if (mine === Infinity) continue;
    let victim: J | undefined;
    let most = 0;
    for (const [other, jobs] of running) {
      if (other === tenant || jobs.length <= most) continue;
      if (!(jobs.length >= mine + 2 || jobs.length === slots)) continue;
      const candidate = jobs.length >= 2 ? jobs[jobs.length - 1] : jobs[0].preempted ? undefined : jobs[0];
      if (!candidate) continue;
      most = jobs.length;
      victim = candidate;
    }
    if (!victim) continue;
    const due = Math.max(head.queuedAt, victim.startedAt ?? 0) + sliceMs;
    if (due <= now) return { victim };
    next = Math.min(next, due);
  }
  return next < Infinity ? { at: next } : undefined;
}
