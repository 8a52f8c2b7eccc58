import { tiersForRole, type ActorRole } from "../../domain/actor-role.js";
import { AlreadyExistsError, FailedPreconditionError, InvalidArgumentError, NotFoundError } from "../../domain/errors.js";
import { extractiveSummary, type Summariser } from "../../domain/extractive-summariser.js";
import { guardFragments, isFragmentVisible } from "../../domain/fragment-visibility.js";
import { projectNameProblem } from "../../domain/project-name.js";
import type { ScopedBackendView } from "../../domain/scoped-backend-view.js";
import { fragmentKey, TIER_NAMES, tierAbove, tierBelow, tierFacts, type TierFragment, type TierName } from "../../domain/tier-fragment.js";
import { LruTierPolicy, type TierBudgets, type TierPolicy } from "../../domain/tier-policy.js";
import { countTokens, truncateToTokens } from "../../domain/token-count.js";
import { newUlid, resourceIdProblem } from "../../domain/ulid-id.js";
import type { RegistryStore } from "../../ports/registry-store.js";
import { isSharedTierStore, type LoadedFragment, type SharedTierStore, type TierChanges, type TierStore } from "../../ports/tier-store.js";
import { SerialQueue } from "../shared/serial-queue.js";
import { isWritableResource, resourceNotFound } from "../shared/writable-resource.js";
import { scopeViolation } from "../../domain/scope-violation.js";
import { metadataViolations } from "../../domain/metadata-limits.js";
import { hasNul, NUL_PROBLEM } from "../../domain/nul-character.js";

/** Client-chosen fragment ids: printable, path-safe, bounded. */
const FRAGMENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** The largest fragment content accepted, in characters. */
export const MAX_FRAGMENT_CHARS = 256 * 1024;

/** How the tier service is tuned. */
export interface TierServiceOptions {
  budgets: TierBudgets;
  /** Token target of the summary made on demotion into cold. */
  summaryTokens: number;
  /** The summariser; extractiveSummary by default. */
  summarise?: Summariser;
  /** The clock for timestamps (LRU order uses a sequence number, never this). */
  now?: () => Date;
  /** The placement policy over the budgets; least recently used (LruTierPolicy) by default. */
  policy?: (budgets: TierBudgets) => TierPolicy;
  /**
   * Where a stored fragment's project and resource are read again inside its write: a resource being erased
   * or gone, or a project deleted, refuses the fragment (see storeFragment). Undefined: not read again (a
   * tier service with no registry, as in unit tests of placement).
   */
  registry?: Pick<RegistryStore, "getProject" | "resourceState">;
}

/** A fragment to store, as the request gives it. */
export interface FragmentInput {
  /** Empty: the server assigns a ULID. */
  id: string;
  content: string;
  /** Undefined: hot. */
  tier: TierName | undefined;
  projectName: string;
  /** Empty when the fragment is about no resource. */
  resourceId: string;
  metadata: Record<string, string>;
}

/** A fragment moved down or deleted to make room (always one of the calling principal's: `id` is in its namespace). */
export interface Displacement {
  id: string;
  from: TierName;
  /** Undefined when deleted out of cold. */
  to: TierName | undefined;
  evicted: boolean;
}

/** A fragment in its new place, and what its placement displaced. */
export interface PlacementResult {
  fragment: TierFragment;
  displaced: Displacement[];
}

/**
 * The tier counters and sizes, of what the call's scope can see only: counters count since the server
 * started (on a store several servers share, since the database was made, every server's events: a client
 * behind a load balancer sees one deployment), kept per principal and project and summed over the call's
 * projects (lookups that found nothing visible belong to no project: they count under the scope they were
 * asked in, never in the principal's other scopes); population and tokens count the asking principal's fragments visible in the
 * call's scope. No figure moves because of another tenant, and no tenant learns the size of another's context.
 *
 * GetFragment lookups fall through the tiers: `hotHits + hotMisses` = lookups, `hotMisses = warmHits +
 * warmMisses`, `warmMisses = coldHits + misses`. `demotions` counts every move one tier down (DemoteFragment,
 * displacement over budget, EvictLru on hot or warm); `promotions` counts PromoteFragment; `evictions`
 * counts deletions out of cold (overflow and EvictLru on cold).
 */
export interface TierMetrics {
  hotHits: number;
  hotMisses: number;
  warmHits: number;
  warmMisses: number;
  coldHits: number;
  misses: number;
  promotions: number;
  demotions: number;
  evictions: number;
  population: Record<TierName, number>;
  tokens: Record<TierName, number>;
}

type Counters = Omit<TierMetrics, "population" | "tokens">;

const COUNTER_NAMES = Object.keys(zeroCounters()) as (keyof Counters)[];

function zeroCounters(): Counters {
  return { hotHits: 0, hotMisses: 0, warmHits: 0, warmMisses: 0, coldHits: 0, misses: 0, promotions: 0, demotions: 0, evictions: 0 };
}

/** What a GetFragment lookup counts, by where it found the fragment: the lookups fall through the tiers. */
const HIT_IN: Record<TierName, readonly (keyof Counters)[]> = {
  hot: ["hotHits"],
  warm: ["hotMisses", "warmHits"],
  cold: ["hotMisses", "warmMisses", "coldHits"],
};
const MISSED: readonly (keyof Counters)[] = ["hotMisses", "warmMisses", "misses"];
const PROMOTED: readonly (keyof Counters)[] = ["promotions"];
const DEMOTED: readonly (keyof Counters)[] = ["demotions"];
const EVICTED: readonly (keyof Counters)[] = ["evictions"];

/** The budget pool, and counter bucket, of a principal's project: fragmentKey-style, so no two pairs collide. */
function poolOf(owner: string, projectName: string): string {
  return fragmentKey(owner, projectName);
}

/**
 * The counter bucket of a principal's lookups that found nothing visible under one scope: a miss has no
 * project, so it counts where it was asked (API.md), never in another scope of the same principal. No
 * project name starts with "@", so no miss bucket is a project's.
 */
function missPoolOf(owner: string, scopeId: string): string {
  return fragmentKey(owner, `@${scopeId}`);
}

/**
 * Keeps agents' working context in three tiers within budgets that always hold: hot (in memory, written
 * through to the store, budget in tokens), warm and cold (budgets in fragments). Storing or promoting into a
 * full tier moves its least recently used fragments down one tier, cold overflow deletes; demotion into cold
 * summarises. Every operation runs through one SerialQueue (a read that is synchronous from start to end, a
 * hot GetFragment or a GetMetrics, runs at once when the queue is empty: just as serialised, since nothing can
 * run between its steps), and every change is persisted before the in-memory placement (TierPolicy) records it, so a fragment is in exactly one tier at any moment, also under
 * concurrent calls, and a restart finds every fragment again. On a store several servers share
 * (SharedTierStore: PostgreSQL), each operation also runs as one transaction under the deployment-wide tier
 * lock, after bringing the in-memory placement up to what the other servers committed, so every server sees
 * another's promotions, demotions and evictions at its next call and budgets hold across servers.
 *
 * Fragment ids are namespaced per principal (the owner of the call's scope, `view.principal`): a fragment is
 * (owner, id), two principals may use the same id independently, and every operation only ever sees the
 * calling principal's fragments, then only those its scope's projects and resources allow. So whether another
 * principal holds an id never changes an answer. Within one principal, an id held by one of its own
 * fragments outside the call's scope is ALREADY_EXISTS on store (same tenant, nothing to hide; overwriting
 * context the scope cannot see would be the surprise), and NOT_FOUND on every other call.
 *
 * The budgets apply per principal and project (API.md: each per project; per principal too, since fragments
 * are namespaced per principal), so one tenant's or project's fragments never displace, demote or evict
 * another's. Visibility is per call: a fragment outside the call's principal or scope is NOT_FOUND (never
 * revealed), EvictLru only ever picks visible fragments, and responses never name invisible ones.
 * @example
 * const tiers = await TierService.open(store, { budgets, summaryTokens: 128 });
 * const { fragment } = await tiers.storeFragment(view, { id: "", content, tier: undefined, projectName: "local/api", resourceId: "", metadata: {} });
 */
export class TierService {
  private readonly queue = new SerialQueue();
  /**
   * This server's counters by poolOf(owner, project); lookups that found nothing visible under
   * missPoolOf(owner, scope). On a shared store GetMetrics reads the deployment's from the store instead.
   */
  private readonly counters = new Map<string, Counters>();
  /** On a shared store, what the operation in progress counted, by pool: written in its transaction. */
  private readonly uncommittedCounts = new Map<string, Partial<Counters>>();
  private readonly summarise: Summariser;
  private readonly now: () => Date;
  /** The store, when several servers share it: every operation then runs through its `coordinated`. */
  private readonly shared: SharedTierStore | undefined;

  private constructor(
    private readonly store: TierStore,
    private policy: TierPolicy,
    /** Every fragment of every principal by fragmentKey(owner, id), content kept only for hot ones. */
    private readonly index: Map<string, LoadedFragment>,
    private readonly options: TierServiceOptions,
  ) {
    this.summarise = options.summarise ?? extractiveSummary;
    this.now = options.now ?? (() => new Date());
    this.shared = isSharedTierStore(store) ? store : undefined;
  }

  /**
   * Loads every stored fragment (the store reconciles interrupted moves first) and brings the tiers within
   * the configured budgets, which may be smaller than at the last start.
   */
  static async open(store: TierStore, options: TierServiceOptions): Promise<TierService> {
    const service = new TierService(store, newPolicy(options), new Map(), options);
    // A shared store hands the first coordinated call every fragment (TierChanges.full).
    if (!service.shared) service.apply({ full: true, saved: await store.load(), removed: [] });
    await service.run(true, () => service.rebalance());
    return service;
  }

  /**
   * Runs `work` after every earlier operation of this server (see `inOrder`), then answers once what it wrote
   * or read is durable (`store.sync`). The wait is outside the queue: operations queued meanwhile run, and
   * their writes share the next sync (group commit) instead of each holding the queue through an fsync.
   */
  private async run<T>(write: boolean, work: () => Promise<T>): Promise<T> {
    let out: T;
    try {
      out = await this.inOrder(write, work);
    } catch (err) {
      // What the failed operation wrote before failing becomes durable with this sync; its caller hears the error.
      this.store.sync()?.catch(() => undefined);
      throw err;
    }
    await this.store.sync();
    return out;
  }

  /**
   * Runs `work` after every earlier operation of this server; on a shared store also as one transaction
   * under the deployment-wide tier lock (exclusive when it may `write`), with the other servers' changes
   * applied first.
   */
  private inOrder<T>(write: boolean, work: () => Promise<T>): Promise<T> {
    const shared = this.shared;
    if (!shared) return this.queue.run(work);
    return this.queue.run(() =>
      shared.coordinated(
        write,
        (changes) => this.apply(changes),
        async () => {
          this.uncommittedCounts.clear();
          const out = await work();
          // The operation's counts join its transaction: committed with its moves, rolled back with them.
          for (const [pool, counts] of this.uncommittedCounts) await shared.addCounts(pool, counts);
          this.uncommittedCounts.clear();
          return out;
        },
      ),
    );
  }

  /** Brings the index and the policy up to `changes` (all of them first forgotten on a full reload). */
  private apply(changes: TierChanges): void {
    if (changes.full && this.index.size > 0) {
      this.index.clear();
      this.policy = newPolicy(this.options);
    }
    for (const { owner, id } of changes.removed) {
      const key = fragmentKey(owner, id);
      this.policy.remove(key);
      this.index.delete(key);
    }
    // Ascending access order: each place() makes its fragment the most recently used of its tier.
    for (const f of [...changes.saved].sort((a, b) => a.accessSeq - b.accessSeq)) {
      const key = fragmentKey(f.owner, f.id);
      this.index.set(key, f);
      this.policy.place(key, f.tier, f.tokenCount, f.accessSeq, poolOf(f.owner, f.projectName));
    }
  }

  /**
   * Stores (or replaces: same id, same fragment, its tier may change) a fragment into `input.tier` (hot
   * when unset), then displaces least recently used fragments of any tier now over budget. A fragment
   * larger than the whole hot budget is refused into hot (INVALID_ARGUMENT `fragment.content`), never
   * silently dropped. The id is in the calling principal's namespace: another principal's fragment of the
   * same id is neither seen, overwritten nor hinted at. An id held by one of the principal's own fragments
   * outside the call's scope is ALREADY_EXISTS (the same tenant learns nothing new, and context its other
   * scopes use is never overwritten from a scope that cannot see it). A store only displaces fragments of
   * its own principal and project (the budgets are per pool); `displaced` lists those the call's scope can see.
   * The call's scope was resolved before the call reached this server's queue of tier operations (on a shared
   * store, the deployment's tier lock), and an erasure may have run meanwhile: the fragment's project and
   * resource are read again in the operation, and one deleted or being erased is NOT_FOUND, so no fragment
   * outlives the erasure of what it names (the erasure's removal of fragments runs through the same queue).
   */
  storeFragment(view: ScopedBackendView, input: FragmentInput): Promise<PlacementResult> {
    const owner = ownerOf(view);
    const id = input.id.length === 0 ? newUlid() : checkId("fragment.fragment_id", input.id);
    checkOwner(view, input.projectName, input.resourceId);
    checkContent(input.content);
    const metadataProblems = metadataViolations("fragment.metadata", input.metadata);
    if (metadataProblems.length > 0) throw new InvalidArgumentError(metadataProblems);
    const tier = input.tier ?? "hot";
    const tokenCount = countTokens(input.content);
    if (!this.policy.fits(tier, tokenCount)) {
      throw InvalidArgumentError.field(
        "fragment.content",
        `has ${tokenCount} tokens, more than the whole hot budget (${this.options.budgets.maxTokensHot}): store it in warm or cold`,
      );
    }
    return this.run(true, async () => {
      await this.assertStillThere(input.projectName, input.resourceId);
      const existing = this.index.get(fragmentKey(owner, id));
      if (existing && !isFragmentVisible(view, existing)) throw new AlreadyExistsError(`fragment id ${id} is taken`);
      const summary = tierFacts(tier).summarised ? await this.summaryOf(input.content) : "";
      const now = this.now();
      const fragment: TierFragment = {
        owner,
        id,
        tier,
        projectName: input.projectName,
        resourceId: input.resourceId,
        metadata: { ...input.metadata },
        content: input.content,
        summary,
        tokenCount,
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
        lastAccessedAt: now,
        accessSeq: this.policy.nextSeq(),
      };
      await this.persist(fragment);
      const displaced = await this.rebalance(view);
      return { fragment, displaced };
    });
  }

  /** Refuses (NOT_FOUND) a fragment whose project is deleted, or whose resource is being erased or gone, by now. */
  private async assertStillThere(projectName: string, resourceId: string): Promise<void> {
    const registry = this.options.registry;
    if (!registry) return;
    // Both read at once: on a shared store this runs under the deployment's tier lock.
    const [writable, project] = await Promise.all([
      resourceId.length === 0 || isWritableResource(registry, resourceId),
      registry.getProject(projectName),
    ]);
    if (!writable) throw resourceNotFound(resourceId);
    if (!project) throw new NotFoundError(`project ${projectName} not found`);
  }

  /**
   * The calling principal's fragment `id` with its full content, marked as just used. Hits and misses count
   * per tier; a fragment outside the scope is a miss and NOT_FOUND, like a missing one. A lookup that needs
   * no store read (a hot fragment, or a miss) on a store of this server alone, while no other operation is
   * queued or running, is answered at once: it is synchronous from start to end, so it is as serialised as
   * a queued one (nothing runs between its steps) without the queue's promise hops; like every answer, it
   * waits for the sync of writes not yet durable (one an operation that left the queue may still await).
   */
  async getFragment(view: ScopedBackendView, id: string): Promise<TierFragment> {
    const owner = ownerOf(view);
    checkId("fragment_id", id);
    const key = fragmentKey(owner, id);
    let found: TierFragment | NotFoundError | undefined;
    if (!this.shared && this.queue.idle) {
      found = this.lookupInMemory(view, key, owner, id);
      // An operation that wrote what it found may still wait for its sync: answered once that is durable too.
      const writing = found === undefined ? undefined : this.store.sync();
      if (writing) await writing;
    }
    found ??= await this.run(true, async () => {
      const f = this.index.get(key);
      // Returned, not thrown here: on a shared store a throw rolls the operation back, the miss's counts with it.
      if (!f || !isFragmentVisible(view, f)) return this.miss(view, owner, id);
      return this.hit(view, key, f, await this.contentOf(f));
    });
    if (found instanceof NotFoundError) throw found;
    return found;
  }

  /** The answer of a lookup that needs no store read (a miss, or a fragment whose content is in memory); undefined when it needs one. */
  private lookupInMemory(view: ScopedBackendView, key: string, owner: string, id: string): TierFragment | NotFoundError | undefined {
    const f = this.index.get(key);
    if (!f || !isFragmentVisible(view, f)) return this.miss(view, owner, id);
    return f.content === undefined ? undefined : this.hit(view, key, f, f.content);
  }

  /** Counts a lookup that found nothing the caller may see (under the call's scope, in no project's pool), and makes its NOT_FOUND. */
  private miss(view: ScopedBackendView, owner: string, id: string): NotFoundError {
    this.countIn(missPoolOf(owner, view.scopeId), MISSED);
    return notFound(id);
  }

  /** Counts a hit on `f` in its tier, marks it as just used (recorded in the store too), and answers it with `content`. */
  private hit(view: ScopedBackendView, key: string, f: LoadedFragment, content: string): TierFragment | NotFoundError {
    this.count(f.owner, f.projectName, HIT_IN[f.tier]);
    const seq = this.policy.nextSeq();
    const at = this.now();
    f.accessSeq = seq;
    f.lastAccessedAt = at;
    this.policy.touch(key, seq);
    this.store.recordAccess(f.owner, f.id, at, seq);
    return guardFragments(view, [{ ...f, content }], "tier get")[0] ?? notFound(f.id);
  }

  /**
   * Moves a fragment one tier up (cold to warm, warm to hot), making room the way a store does. From hot,
   * or into hot when larger than the whole hot budget: FAILED_PRECONDITION.
   */
  promoteFragment(view: ScopedBackendView, id: string): Promise<PlacementResult> {
    checkId("fragment_id", id);
    return this.run(true, async () => {
      const f = this.visible(view, id);
      const up = tierAbove(f.tier);
      if (!up) throw new FailedPreconditionError(`fragment ${id} is already in hot: there is no tier above it`);
      if (!this.policy.fits(up, f.tokenCount)) {
        throw new FailedPreconditionError(
          `fragment ${id} has ${f.tokenCount} tokens, more than the whole hot budget (${this.options.budgets.maxTokensHot}): it cannot be promoted to hot`,
        );
      }
      const fragment = await this.move(f, up);
      this.count(f.owner, f.projectName, PROMOTED);
      const displaced = await this.rebalance(view);
      return { fragment, displaced };
    });
  }

  /** Moves a fragment one tier down (hot to warm, warm to cold with a summary). From cold: FAILED_PRECONDITION. */
  demoteFragment(view: ScopedBackendView, id: string): Promise<PlacementResult> {
    checkId("fragment_id", id);
    return this.run(true, async () => {
      const f = this.visible(view, id);
      const down = tierBelow(f.tier);
      if (!down)
        throw new FailedPreconditionError(`fragment ${id} is already in cold: there is no tier below it (EvictLru deletes from cold)`);
      const fragment = await this.move(f, down);
      this.count(f.owner, f.projectName, DEMOTED);
      const displaced = await this.rebalance(view);
      return { fragment, displaced };
    });
  }

  /**
   * Evicts exactly the `count` least recently used fragments of `tier` that the call's principal and scope
   * can see (all of them when fewer): one plan never evicts another tenant's context. Evicting from hot or warm moves the
   * fragments one tier down through the normal demotion path (summarised into cold), because a tier's
   * eviction is what its overflow does too and deleting context an agent may still need would be a
   * surprise; evicting from cold deletes, counted in `evictions`. Returns the ids in the policy's eviction
   * order (least recently used first by default).
   */
  evictLru(view: ScopedBackendView, tier: TierName, count: number): Promise<string[]> {
    if (!Number.isInteger(count) || count <= 0) throw InvalidArgumentError.field("count", `must be greater than 0, got ${count}`);
    return this.run(true, async () => {
      const victims = this.visibleInOrder(view, tier, view.projectSet, count);
      const down = tierBelow(tier);
      for (const f of victims) {
        if (down) {
          await this.move(f, down);
          this.count(f.owner, f.projectName, DEMOTED);
        } else await this.delete(f);
      }
      await this.rebalance();
      return victims.map((f) => f.id);
    });
  }

  /**
   * The calling principal's fragments `role` sees among `projectNames` (every project of the scope when empty): hot, then warm,
   * then cold, most recently used first within a tier. Cold fragments show their summary as content unless
   * `includeFullContent`. Reading a view is not a use: it leaves the LRU order alone.
   */
  getForActor(
    view: ScopedBackendView,
    role: ActorRole,
    projectNames: readonly string[],
    includeFullContent: boolean,
  ): Promise<TierFragment[]> {
    projectNames.forEach((p, i) => {
      const problem = projectNameProblem(p);
      if (problem) throw InvalidArgumentError.field(`project_names[${i}]`, problem);
    });
    const outside = projectNames.filter((p) => !view.projectSet.has(p));
    if (outside.length > 0) throw scopeViolation({ available: view.projectNames, projects: outside });
    const projects = projectNames.length > 0 ? new Set(projectNames) : view.projectSet;
    return this.run(false, async () => {
      const picked: LoadedFragment[] = [];
      for (const tier of tiersForRole(role)) {
        const inTier = this.visibleInOrder(view, tier, projects, Number.POSITIVE_INFINITY);
        // Most recently used first, whatever order the policy gives fragments up in.
        inTier.sort((a, b) => b.accessSeq - a.accessSeq);
        picked.push(...inTier);
      }
      const toRead = picked.filter((f) => f.tier === "warm" || (f.tier === "cold" && includeFullContent)).map((f) => f.id);
      // Every picked fragment is the caller's (isFragmentVisible checks the owner), so its ids are one namespace.
      const contents = toRead.length > 0 ? await this.store.readContents(view.principal, toRead) : new Map<string, string>();
      const out: TierFragment[] = [];
      for (const f of picked) {
        const content = f.content ?? (f.tier === "cold" && !includeFullContent ? f.summary : contents.get(f.id));
        if (content === undefined) throw new Error(`tier store lost the content of fragment ${f.id}`);
        out.push({ ...f, content });
      }
      return guardFragments(view, out, "tier view");
    });
  }

  /**
   * The calling principal's counters summed over the call's projects (plus its lookups that found nothing
   * under this scope), and the population and tokens per tier of its fragments visible in the call's scope.
   */
  async getMetrics(view: ScopedBackendView): Promise<TierMetrics> {
    const owner = ownerOf(view);
    const pools = [missPoolOf(owner, view.scopeId), ...[...view.projectSet].map((p) => poolOf(owner, p))];
    const shared = this.shared;
    // All in memory on a store of this server alone: answered at once when nothing is queued (so no cascade is half-applied).
    if (!shared && this.queue.idle) {
      const metrics = this.metricsOf(view, this.countedIn(pools));
      // The population it counts may hold writes still waiting for their sync: answered once they are durable.
      const writing = this.store.sync();
      if (writing) await writing;
      return metrics;
    }
    return this.run(false, async () => this.metricsOf(view, shared ? await shared.readCounts(pools) : this.countedIn(pools)));
  }

  /** This server's counters of `pools`, summed by name. */
  private countedIn(pools: readonly string[]): Counters {
    const sum = zeroCounters();
    for (const pool of pools) {
      const c = this.counters.get(pool);
      if (!c) continue;
      for (const k of COUNTER_NAMES) sum[k] += c[k];
    }
    return sum;
  }

  /** `counted` (absent names: never counted) with the population and tokens per tier of what `view` sees. */
  private metricsOf(view: ScopedBackendView, counted: Readonly<Record<string, number | undefined>>): TierMetrics {
    const population: Record<TierName, number> = { hot: 0, warm: 0, cold: 0 };
    const tokens: Record<TierName, number> = { hot: 0, warm: 0, cold: 0 };
    for (const tier of TIER_NAMES) {
      for (const f of this.visibleInOrder(view, tier, view.projectSet, Number.POSITIVE_INFINITY)) {
        population[tier] += 1;
        tokens[tier] += f.tokenCount;
      }
    }
    const sum = zeroCounters();
    for (const k of COUNTER_NAMES) sum[k] = counted[k] ?? 0;
    return { ...sum, population, tokens };
  }

  /** Counts one of each of `names` in the counter bucket of `owner`'s project. */
  private count(owner: string, projectName: string, names: readonly (keyof Counters)[]): void {
    this.countIn(poolOf(owner, projectName), names);
  }

  /**
   * Counts one of each of `names` in the counter bucket `pool`: this server's, and on a shared store the
   * deployment's too (written with the operation).
   */
  private countIn(pool: string, names: readonly (keyof Counters)[]): void {
    let c = this.counters.get(pool);
    if (!c) {
      c = zeroCounters();
      this.counters.set(pool, c);
    }
    for (const name of names) c[name] += 1;
    if (!this.shared) return;
    let uncommitted = this.uncommittedCounts.get(pool);
    if (!uncommitted) this.uncommittedCounts.set(pool, (uncommitted = {}));
    for (const name of names) uncommitted[name] = (uncommitted[name] ?? 0) + 1;
  }

  /**
   * Deployment-wide counters and sizes per tier, every principal and project summed, for operators'
   * metrics and invariant checks: never exposed to callers (GetMetrics answers `getMetrics`, scoped). The
   * counters are this server's own events (Prometheus scrapes each server and sums), the sizes the deployment's.
   */
  totals(): TierMetrics {
    const population = {} as Record<TierName, number>;
    const tokens = {} as Record<TierName, number>;
    for (const t of TIER_NAMES) {
      population[t] = this.policy.size(t);
      tokens[t] = this.policy.tokens(t);
    }
    const sum = zeroCounters();
    for (const c of this.counters.values()) for (const k of COUNTER_NAMES) sum[k] += c[k];
    return { ...sum, population, tokens };
  }

  /** Finishes queued operations, then closes the store (flushing buffered access order). */
  async close(): Promise<void> {
    await this.queue.drain();
    await this.store.close();
  }

  /**
   * Up to `limit` of the fragments of `tier` that `view` sees among `projects`, in the policy's eviction
   * order. It reads only the caller's pools (one per project of the principal), never another tenant's
   * fragments: a call costs what the caller holds (at most its budgets), however much the deployment holds
   * (a walk of the whole tier cost 2.2 ms a GetForActor beside 20,000 fragments of others). Within a pool
   * the order is the policy's; a call over several projects interleaves them oldest access first.
   */
  private visibleInOrder(view: ScopedBackendView, tier: TierName, projects: ReadonlySet<string>, limit: number): LoadedFragment[] {
    const owner = ownerOf(view);
    const pools: LoadedFragment[][] = [];
    for (const project of projects) {
      const pool = poolOf(owner, project);
      const found: LoadedFragment[] = [];
      for (const e of this.policy.evictionOrder(tier, pool)) {
        if (found.length >= limit) break;
        // A policy may order the whole tier whatever pool it is asked for: the pool check keeps to the caller's.
        if (e.pool !== pool) continue;
        const f = this.index.get(e.key);
        if (f && isFragmentVisible(view, f)) found.push(f);
      }
      if (found.length > 0) pools.push(found);
    }
    if (pools.length <= 1) return pools[0] ?? [];
    return pools
      .flat()
      .sort((a, b) => a.accessSeq - b.accessSeq)
      .slice(0, limit);
  }

  /** The calling principal's fragment `id` when the call's scope sees it; NOT_FOUND otherwise, as for a missing one. */
  private visible(view: ScopedBackendView, id: string): LoadedFragment {
    const f = this.index.get(fragmentKey(ownerOf(view), id));
    if (!f || !isFragmentVisible(view, f)) throw notFound(id);
    return f;
  }

  private async contentOf(f: LoadedFragment): Promise<string> {
    if (f.content !== undefined) return f.content;
    const content = (await this.store.readContents(f.owner, [f.id])).get(f.id);
    if (content === undefined) throw new Error(`tier store lost the content of fragment ${f.id}`);
    return content;
  }

  private async summaryOf(content: string): Promise<string> {
    const target = this.options.summaryTokens;
    const summary = await this.summarise(content, target);
    return countTokens(summary) <= target ? summary : truncateToTokens(summary, target);
  }

  /** Writes the fragment through, then records it in memory (content kept only when hot). */
  private async persist(fragment: TierFragment): Promise<void> {
    await this.store.save(fragment);
    const key = fragmentKey(fragment.owner, fragment.id);
    this.policy.place(key, fragment.tier, fragment.tokenCount, fragment.accessSeq, poolOf(fragment.owner, fragment.projectName));
    this.index.set(key, { ...fragment, content: tierFacts(fragment.tier).inMemory ? fragment.content : undefined });
  }

  /** Moves a fragment to `to` as its most recently used entry; into cold it gains a summary, out of cold it loses it. */
  private async move(f: LoadedFragment, to: TierName): Promise<TierFragment> {
    const content = await this.contentOf(f);
    const summary = tierFacts(to).summarised ? await this.summaryOf(content) : "";
    const now = this.now();
    const moved: TierFragment = { ...f, content, tier: to, summary, updatedAt: now, lastAccessedAt: now, accessSeq: this.policy.nextSeq() };
    await this.persist(moved);
    return moved;
  }

  private async delete(f: LoadedFragment): Promise<void> {
    await this.store.remove(f.owner, f.id);
    const key = fragmentKey(f.owner, f.id);
    this.policy.remove(key);
    this.index.delete(key);
    this.count(f.owner, f.projectName, EVICTED);
  }

  /**
   * Applies the policy's overflow moves until every pool's tiers are within budget. A move stays in the pool
   * that overflowed (the changed fragment's principal and project); what is returned is only what `view` may
   * see (its principal's, in its scope; no view: nothing), so a caller never learns another's fragment ids.
   */
  private async rebalance(view?: ScopedBackendView): Promise<Displacement[]> {
    const displaced: Displacement[] = [];
    for (let step = this.policy.nextOverflowMove(); step; step = this.policy.nextOverflowMove()) {
      const f = this.index.get(step.key);
      if (!f) throw new Error(`tier policy names fragment ${step.key}, which the index lacks`);
      if (step.to) {
        await this.move(f, step.to);
        this.count(f.owner, f.projectName, DEMOTED);
      } else await this.delete(f);
      if (view && isFragmentVisible(view, f)) displaced.push({ id: f.id, from: step.from, to: step.to, evicted: step.to === undefined });
    }
    return displaced;
  }

  /**
   * Deletes the calling principal's fragment `id` from whatever tier holds it (hot, a warm row, a cold file),
   * when the call's scope sees it, and answers true once the deletion is durable. False when the scope sees
   * no such fragment of the principal: never stored, already deleted, outside the scope, or an id only
   * another principal uses all answer alike, so the answer tells nothing of other tenants or scopes. A
   * deletion asked for is no eviction (no counter moves); the tier's population and tokens drop with it.
   */
  deleteFragment(view: ScopedBackendView, id: string): Promise<boolean> {
    checkId("fragment_id", id);
    return this.run(true, async () => {
      const key = fragmentKey(ownerOf(view), id);
      const f = this.index.get(key);
      if (!f || !isFragmentVisible(view, f)) return false;
      await this.store.remove(f.owner, f.id);
      this.policy.remove(key);
      this.index.delete(key);
      return true;
    });
  }

  /**
   * Erases, whoever owns them, every fragment naming resource `resourceId` (or, with `projectName`, held in
   * that project), from whatever tier holds it (the cold file included), for DeleteResource and
   * DeleteProject: answers how many went, and how many of them were cold (a file on the embedded engines).
   * Not counted as evictions (nothing was displaced).
   */
  eraseFragments(match: { resourceId?: string; projectName?: string }): Promise<{ fragments: number; files: number }> {
    return this.run(true, async () => {
      const doomed = [...this.index.values()].filter(
        (f) =>
          (match.resourceId !== undefined && f.resourceId === match.resourceId) ||
          (match.projectName !== undefined && f.projectName === match.projectName),
      );
      for (const f of doomed) {
        await this.store.remove(f.owner, f.id);
        const key = fragmentKey(f.owner, f.id);
        this.policy.remove(key);
        this.index.delete(key);
      }
      return { fragments: doomed.length, files: doomed.filter((f) => f.tier === "cold").length };
    });
  }
}

/** A fresh placement policy over the configured budgets. */
function newPolicy(options: TierServiceOptions): TierPolicy {
  return options.policy ? options.policy(options.budgets) : new LruTierPolicy(options.budgets);
}

/**
 * The namespace of the call's fragments: the principal owning its scope. The access interceptor only builds
 * views of scopes the caller owns, so an empty one is a server bug, never a client's doing.
 */
function ownerOf(view: ScopedBackendView): string {
  if (view.principal.length === 0) throw new Error(`scope ${view.scopeId} has no owner: tier fragments need a principal namespace`);
  return view.principal;
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`fragment ${id} not found`);
}

function checkId(field: string, id: string): string {
  if (id.length === 0) throw InvalidArgumentError.field(field, "must not be empty");
  if (!FRAGMENT_ID.test(id))
    throw InvalidArgumentError.field(field, `"${id.slice(0, 80)}" is not a fragment id: 1 to 128 of [A-Za-z0-9._:-]`);
  return id;
}

function checkOwner(view: ScopedBackendView, projectName: string, resourceId: string): void {
  if (projectName.length === 0)
    throw InvalidArgumentError.field("fragment.project_name", "must not be empty: every fragment belongs to a project");
  const projectProblem = projectNameProblem(projectName);
  if (projectProblem) throw InvalidArgumentError.field("fragment.project_name", projectProblem);
  const resourceProblem = resourceId.length > 0 ? resourceIdProblem(resourceId) : undefined;
  if (resourceProblem) throw InvalidArgumentError.field("fragment.resource_id", resourceProblem);
  const badProject = !view.projectSet.has(projectName);
  const badResource = resourceId.length > 0 && !view.resourceSet.has(resourceId);
  if (!badProject && !badResource) return;
  throw scopeViolation({
    available: view.projectNames,
    projects: badProject ? [projectName] : [],
    resources: badResource ? [resourceId] : [],
  });
}

function checkContent(content: string): void {
  if (content.trim().length === 0) throw InvalidArgumentError.field("fragment.content", "must not be empty");
  if (content.length > MAX_FRAGMENT_CHARS) {
    throw InvalidArgumentError.field("fragment.content", `must be at most ${MAX_FRAGMENT_CHARS} characters, got ${content.length}`);
  }
  if (hasNul(content)) throw InvalidArgumentError.field("fragment.content", NUL_PROBLEM);
}
